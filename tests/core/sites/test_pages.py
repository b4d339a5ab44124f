"""The sites pages per role: safety managers and admins create a site, edit
its establishment fields (each explained), archive and restore it, and keep
its area tree (add under a parent, rename, archive), as the API allows;
supervisors and reporters are refused."""

from __future__ import annotations

import re
from html import unescape

from ehs_core.testing import form_with


def site_of(browser, site_id: int) -> dict:
    return next(s for s in browser.get("/api/sites?includeArchived=true").json if s["id"] == site_id)


def new_site_by_page(browser, name: str = "Plant North", **fields: str) -> int:
    form = form_with(browser.get("/admin/sites"), "/admin/sites")
    form["name"] = name
    for key, value in fields.items():
        form[key] = value
    location = form.submit(status=302).headers["Location"]
    return int(re.search(r"/admin/sites/(\d+)", location)[1])


def test_a_safety_manager_creates_a_site_and_fills_its_establishment(make_user):
    manager = make_user("safety_manager")
    assert "No site yet" in manager.get("/admin/sites").text
    site_id = new_site_by_page(manager, "Plant North", timezone="America/Chicago")
    page = manager.get(f"/admin/sites/{site_id}")
    # What each establishment field means, next to it.
    assert "1 \u2013 Not a government entity (private sector)" in unescape(page.text)
    assert "3 \u2013 Local government entity" in unescape(page.text)
    assert "North American Industry Classification" in page.text
    form = page.forms["site-form"]
    form["streetAddress"], form["city"] = "1 Main St", "Springfield"
    form["state"], form["zip"] = "il", "62701"
    form["naicsCode"], form["ein"], form["establishmentType"] = "336212", "12-3456789", "2"
    form["industryDescription"] = "Truck trailers"
    form.submit(status=302)
    site = site_of(manager, site_id)
    assert (site["timezone"], site["state"], site["naicsCode"], site["ein"], site["establishmentType"]) == (
        "America/Chicago", "IL", "336212", "123456789", 2)
    assert "Plant North" in manager.get("/admin/sites").text


def test_errors_stand_next_to_the_fields(admin):
    refused = admin.post("/admin/sites", {"name": "", "timezone": "Mars/Olympus"}, status=400)
    assert 'id="name-error"' in refused.text and 'id="timezone-error"' in refused.text
    site_id = new_site_by_page(admin)
    refused = admin.post(f"/admin/sites/{site_id}", {"name": "Plant North", "naicsCode": "12",
                                                      "establishmentType": "7"}, status=400)
    assert 'id="naicsCode-error"' in refused.text and "6-digit NAICS code" in refused.text
    assert 'id="establishmentType-error"' in refused.text
    assert site_of(admin, site_id)["naicsCode"] is None


def test_archive_and_restore_a_site(admin):
    site_id = new_site_by_page(admin)
    admin.post(f"/admin/sites/{site_id}", {"archived": "true"}, status=302)
    assert site_of(admin, site_id)["archived"] is True
    assert site_id not in [s["id"] for s in admin.get("/api/sites").json]  # not offered for reports
    assert "Restore the site" in admin.get(f"/admin/sites/{site_id}").text
    admin.post(f"/admin/sites/{site_id}", {"archived": "false"}, status=302)
    assert site_of(admin, site_id)["archived"] is False
    admin.get("/admin/sites/999999", status=404)


def test_the_area_tree_add_under_a_parent_rename_archive(admin):
    site_id = new_site_by_page(admin)
    admin.post(f"/admin/sites/{site_id}/areas", {"name": "Building A", "kind": "building", "parentId": ""},
               status=302)
    building = site_of(admin, site_id)["areas"][0]["id"]
    admin.post(f"/admin/sites/{site_id}/areas", {"name": "Paint line", "kind": "line",
                                                  "parentId": str(building)}, status=302)
    areas = {a["name"]: a for a in site_of(admin, site_id)["areas"]}
    line = areas["Paint line"]
    assert line["parentId"] == building and line["kind"] == "line"
    page = admin.get(f"/admin/sites/{site_id}")
    # shown as a tree: the line's item sits inside the building's
    outer = page.html.select_one(f"#area-{building}")
    assert outer.select_one(f"ul.area-tree #area-{line['id']}") is not None
    admin.post(f"/admin/areas/{line['id']}", {"name": "Paint line 2"}, status=302)
    admin.post(f"/admin/areas/{line['id']}", {"archived": "true"}, status=302)
    line = next(a for a in site_of(admin, site_id)["areas"] if a["id"] == line["id"])
    assert (line["name"], line["archived"]) == ("Paint line 2", True)
    refused = admin.post(f"/admin/areas/{building}", {"name": ""}, status=400)
    assert "field-error" in refused.text
    refused = admin.post(f"/admin/sites/{site_id}/areas", {"name": "Loft", "kind": "area",
                                                           "parentId": str(line["id"])}, status=400)
    assert "The parent area is archived" in refused.text
    admin.post("/admin/areas/999999", {"name": "X"}, status=404)


def test_supervisors_and_reporters_are_refused(admin, make_user):
    site_id = new_site_by_page(admin)
    for role in ("supervisor", "reporter"):
        browser = make_user(role)
        browser.get("/admin/sites", status=403)
        browser.post("/admin/sites", {"name": "Mine"}, status=403)
        browser.get(f"/admin/sites/{site_id}", status=403)
        browser.post(f"/admin/sites/{site_id}/areas", {"name": "Mine"}, status=403)
        assert "/admin/sites" not in browser.get("/").text
    assert "/admin/sites" in admin.get("/").text
