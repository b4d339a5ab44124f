"""People belong to sites (issue #36 item 9): an admin gives each person
the sites they work at (any number; none means all) with
`PATCH /api/users/:id {siteIds}`; `GET /api/users` and `GET /api/auth/me`
return them."""

from __future__ import annotations

from tests.core.workflow.support import new_site


def test_an_admin_gives_a_person_their_sites_and_everyone_reads_them(admin, make_user):
    north, south = new_site(admin, "North"), new_site(admin, "South")
    sam = make_user("supervisor", name="Sam Supervisor")
    assert sam.get("/api/auth/me").json["user"]["siteIds"] == []  # none: all sites
    changed = admin.patch_json(f"/api/users/{sam.user['id']}", {"siteIds": [south, north, south]}).json
    assert changed["siteIds"] == sorted([north, south])
    listed = {u["id"]: u["siteIds"] for u in admin.get("/api/users").json}
    assert listed[sam.user["id"]] == sorted([north, south])
    assert sam.get("/api/auth/me").json["user"]["siteIds"] == sorted([north, south])
    assert admin.patch_json(f"/api/users/{sam.user['id']}", {"siteIds": []}).json["siteIds"] == []


def test_an_unknown_site_is_refused_and_nothing_changes(admin, make_user):
    north = new_site(admin, "North")
    sam = make_user("supervisor")
    admin.patch_json(f"/api/users/{sam.user['id']}", {"siteIds": [north]})
    refused = admin.patch_json(f"/api/users/{sam.user['id']}", {"siteIds": [north, 999_999]}, status=400).json
    assert refused["issues"] == [{"path": "siteIds", "message": "Unknown site: 999999"}]
    bad = admin.patch_json(f"/api/users/{sam.user['id']}", {"siteIds": ["north"]}, status=400).json
    assert bad["issues"][0]["path"].startswith("siteIds")
    assert sam.get("/api/auth/me").json["user"]["siteIds"] == [north]


def test_only_an_admin_sets_sites(admin, make_user):
    north = new_site(admin, "North")
    manager = make_user("safety_manager")
    sam = make_user("supervisor")
    manager.patch_json(f"/api/users/{sam.user['id']}", {"siteIds": [north]}, status=403)
    sam.patch_json(f"/api/users/{sam.user['id']}", {"siteIds": [north]}, status=403)


def test_an_admin_ticks_a_persons_sites_on_the_people_page(admin, make_user):
    north, south = new_site(admin, "North"), new_site(admin, "South")
    sam = make_user("supervisor", name="Sam Supervisor")
    page = admin.get("/admin/users")
    row = page.text.split(f'id="user-{sam.user["id"]}"', 1)[1].split("</tr>", 1)[0]
    assert "All sites" in row
    form = next(f for f in page.forms.values()
                if f.action.endswith(f"/admin/users/{sam.user['id']}") and "siteId" in f.fields)
    for checkbox in form.fields["siteId"]:
        checkbox.checked = checkbox._value == str(south)
    form.submit(status=302)
    assert sam.get("/api/auth/me").json["user"]["siteIds"] == [south]
    row = admin.get("/admin/users").text.split(f'id="user-{sam.user["id"]}"', 1)[1].split("</tr>", 1)[0]
    assert "South" in row and "All sites" not in row
    assert north not in sam.get("/api/auth/me").json["user"]["siteIds"]


def test_the_incident_list_opens_on_the_persons_sites_and_clears_to_all(admin, make_user):
    from tests.core.workflow.support import report

    north, south = new_site(admin, "North"), new_site(admin, "South")
    report(admin, north, title="North spill")
    report(admin, south, title="South ladder")
    sam = make_user("supervisor")
    everything = sam.get("/incidents", status=200)  # no sites chosen: every site
    assert "North spill" in everything.text and "South ladder" in everything.text
    admin.patch_json(f"/api/users/{sam.user['id']}", {"siteIds": [south]})
    opened = sam.get("/incidents", status=302).follow()
    assert "South ladder" in opened.text and "North spill" not in opened.text
    assert f'name="siteId" value="{south}" checked' in opened.text  # a filter one can untick
    cleared = opened.click(description="Clear filters")
    assert "South ladder" in cleared.text and "North spill" in cleared.text
