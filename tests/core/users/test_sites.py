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
