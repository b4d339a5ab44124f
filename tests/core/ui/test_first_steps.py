"""The first hour (issue #36 item 14): after setup, home shows an admin the
steps left (sites, people, and what each enabled plugin adds), each ticked
as it is done, until all are; nobody else sees it."""

from __future__ import annotations

import re

from ehs_core.testing import new_site


def steps(page) -> list[tuple[str, bool]]:
    card = page.text.split('id="card-first_steps"', 1)[1].split("</ol>", 1)[0]
    return [(re.sub(r"<[^>]+>|Done: ", "", item).strip(), "class=\"done\"" in attrs)
            for attrs, item in re.findall(r"<li([^>]*)>(.*?)</li>", card, re.S)]


def test_home_shows_an_admin_the_steps_left_until_all_are_done(admin, make_user):
    first = steps(admin.get("/"))
    assert first == [("Add your sites and their areas", False),
                     ("Invite the people who report and follow up", False),
                     ("Enter each site's establishment details for the injury records", False),
                     ("Make a reporting link and print its poster", False)]
    site = new_site(admin)["id"]
    make_user("reporter")
    after = dict(steps(admin.get("/")))
    assert after["Add your sites and their areas"] and after["Invite the people who report and follow up"]
    assert not after["Make a reporting link and print its poster"]
    assert make_user("safety_manager").get("/").text.count('id="card-first_steps"') == 0
    admin.patch_json(f"/api/sites/{site}", {"streetAddress": "1 Main St", "city": "Dayton", "state": "OH",
                                            "zip": "45402", "naicsCode": "332710"})
    admin.post_json("/api/kiosks", {"name": "Gate tablet"}, status=201)
    assert 'id="card-first_steps"' not in admin.get("/").text
