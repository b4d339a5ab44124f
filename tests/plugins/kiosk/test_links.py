"""Reporting links: the plugin's own schema branch, managing links (safety
managers only), tokens, revocation, what a link token may reach (only the two
kiosk endpoints), no CORS, and the configuration a link reads.

Spec: Reporting link, Reporting links endpoints, Authentication item 7;
security reference items 21 and 24."""

from __future__ import annotations

import re

import pytest
from alembic.script import ScriptDirectory
from sqlalchemy import select, text

from ehs_core.migrations import alembic_config
from ehs_plugins.kiosk.models import KioskLink
from tests.core.attachments import samples
from tests.plugins.kiosk.support import (
    CONFIG,
    HEADER,
    LINKS,
    REPORTS,
    assert_error,
    file_report,
    incident_count,
    kiosk_config,
    new_area,
    new_link,
    new_site,
    report_body,
)

EVIL = "https://evil.test"


# --- schema: the plugin's own alembic branch --------------------------------------------


def test_the_plugin_has_its_own_alembic_branch_and_version_table(registry, dbsession):
    branches = {branch.name: branch for branch in registry["migration_branches"]}
    assert "kiosk" in branches
    kiosk = branches["kiosk"]
    assert kiosk.version_table == "alembic_version_kiosk"
    assert kiosk.location.startswith("ehs_plugins.kiosk:")
    scripts = ScriptDirectory.from_config(alembic_config(kiosk))
    bases = [scripts.get_revision(rev) for rev in scripts.get_bases()]
    assert len(bases) == 1
    assert bases[0].down_revision is None
    assert "kiosk" in bases[0].branch_labels
    heads = scripts.get_heads()
    assert dbsession.execute(text("SELECT version_num FROM alembic_version_kiosk")).scalars().all() == heads
    core = dbsession.execute(text("SELECT version_num FROM alembic_version")).scalars().all()
    assert not set(core) & {rev.revision for rev in scripts.walk_revisions()}
    # the branch really creates the plugin's tables
    assert dbsession.execute(select(KioskLink)).scalars().all() == []


# --- managing links ----------------------------------------------------------------------


def test_a_safety_manager_creates_lists_and_updates_links(admin, make_user):
    manager = make_user("safety_manager")
    site = new_site(admin)
    created = manager.post_json(LINKS, {"name": "Gate tablet"}, status=201).json
    assert created["name"] == "Gate tablet"
    assert created["siteId"] is None
    assert created["revoked"] is False
    assert isinstance(created["id"], int)
    scoped = new_link(manager, "Canteen QR code", site_id=site)
    assert scoped["siteId"] == site

    listed = manager.get(LINKS, status=200).json
    rows = [(item["id"], item["name"], item["siteId"], item["revoked"], item["token"]) for item in listed]
    assert rows == [
        (created["id"], "Gate tablet", None, False, created["token"]),
        (scoped["id"], "Canteen QR code", site, False, scoped["token"]),
    ]

    renamed = manager.patch_json(f"{LINKS}/{created['id']}", {"name": "Main gate"}, status=200).json
    assert (renamed["name"], renamed["siteId"], renamed["revoked"]) == ("Main gate", None, False)
    moved = manager.patch_json(f"{LINKS}/{created['id']}", {"siteId": site}, status=200).json
    assert (moved["name"], moved["siteId"]) == ("Main gate", site)
    freed = manager.patch_json(f"{LINKS}/{created['id']}", {"siteId": None}, status=200).json
    assert freed["siteId"] is None
    revoked = manager.patch_json(f"{LINKS}/{created['id']}", {"revoked": True}, status=200).json
    assert revoked["revoked"] is True
    assert revoked["token"] == created["token"]
    listed = {item["id"]: item for item in manager.get(LINKS).json}
    assert listed[created["id"]]["name"] == "Main gate"
    assert listed[created["id"]]["revoked"] is True
    assert listed[scoped["id"]]["revoked"] is False


def test_admins_may_manage_links_too(admin):
    link = new_link(admin)
    assert admin.get(LINKS).json[0]["id"] == link["id"]
    admin.patch_json(f"{LINKS}/{link['id']}", {"name": "Renamed"}, status=200)


@pytest.mark.parametrize("role", ["reporter", "supervisor"])
def test_roles_below_safety_manager_may_not_manage_links(admin, make_user, dbsession, role):
    link = new_link(admin)
    browser = make_user(role)
    assert_error(browser.get(LINKS, status=403), 403)
    assert_error(browser.post_json(LINKS, {"name": "Mine"}, status=403), 403)
    assert_error(browser.patch_json(f"{LINKS}/{link['id']}", {"revoked": True}, status=403), 403)
    stored = dbsession.execute(select(KioskLink)).scalars().all()
    assert [(item.name, item.revoked) for item in stored] == [("Gate tablet", False)]


def test_links_need_a_session(admin, client):
    link = new_link(admin)
    assert_error(client.get(LINKS, status=401), 401)
    assert_error(client.post_json(LINKS, {"name": "Mine"}, status=401), 401)
    assert_error(client.patch_json(f"{LINKS}/{link['id']}", {"revoked": True}, status=401), 401)


def test_tokens_are_long_random_and_distinct(admin):
    links = [new_link(admin, f"Tablet {n}") for n in range(5)]
    tokens = [link["token"] for link in links]
    assert len(set(tokens)) == len(tokens)
    for link in links:
        # at least 256 bits of randomness, URL-safe (it goes into /k/<token>)
        assert len(link["token"]) >= 43
        assert re.fullmatch(r"[A-Za-z0-9_\-]+", link["token"])
        assert str(link["id"]) != link["token"] and link["name"] not in link["token"]
    # no common prefix that would hint at a counter or a timestamp
    assert len({token[:8] for token in tokens}) == len(tokens)


@pytest.mark.parametrize("body", [{}, {"name": ""}, {"name": "x" * 201}, {"name": "Ok", "siteId": "north"}])
def test_invalid_link_bodies_are_refused(admin, dbsession, body):
    response = admin.post_json(LINKS, body, status=400)
    assert_error(response, 400)
    assert response.json["issues"]
    assert dbsession.execute(select(KioskLink)).scalars().all() == []


def test_a_link_may_only_be_tied_to_a_known_active_site(admin, dbsession):
    archived = new_site(admin, "Old plant")
    admin.patch_json(f"/api/sites/{archived}", {"archived": True}, status=200)
    assert_error(admin.post_json(LINKS, {"name": "Lost", "siteId": 9999}, status=400), 400)
    response = admin.post_json(LINKS, {"name": "Old", "siteId": archived}, status=400)
    assert response.json["issues"] == [
        {"path": "siteId", "message": "This site is archived; a link cannot report on it"}]
    link = new_link(admin)
    assert_error(admin.patch_json(f"{LINKS}/{link['id']}", {"siteId": 9999}, status=400), 400)
    assert_error(admin.patch_json(f"{LINKS}/{link['id']}", {"siteId": archived}, status=400), 400)
    assert admin.get(LINKS).json[0]["siteId"] is None


def test_updating_an_unknown_link_answers_404(admin):
    assert_error(admin.patch_json(f"{LINKS}/999", {"name": "Ghost"}, status=404), 404)


def test_invalid_updates_are_refused(admin):
    link = new_link(admin)
    assert_error(admin.patch_json(f"{LINKS}/{link['id']}", {"name": ""}, status=400), 400)
    assert_error(admin.patch_json(f"{LINKS}/{link['id']}", {"revoked": "maybe"}, status=400), 400)
    assert admin.get(LINKS).json[0]["name"] == "Gate tablet"


# --- revocation ------------------------------------------------------------------------------


def test_a_revoked_link_stops_at_once_and_can_be_restored(admin, client, dbsession):
    site = new_site(admin)
    link = new_link(admin)
    token = link["token"]
    kiosk_config(client, token, status=200)
    file_report(client, token, report_body(site, title="Before"), status=201)

    admin.patch_json(f"{LINKS}/{link['id']}", {"revoked": True}, status=200)
    assert_error(kiosk_config(client, token, status=401), 401)
    assert_error(file_report(client, token, report_body(site, title="After"), status=401), 401)
    client.get(f"/k/{token}", status=404)
    assert incident_count(dbsession) == 1

    admin.patch_json(f"{LINKS}/{link['id']}", {"revoked": False}, status=200)
    kiosk_config(client, token, status=200)
    file_report(client, token, report_body(site, title="Restored"), status=201)
    assert incident_count(dbsession) == 2


# --- what a link token reaches (security item 24) ----------------------------------------------


@pytest.fixture
def filed(admin, client):
    """A site, a link and one report filed through it (INC-0001 with one photo)."""
    site = new_site(admin)
    link = new_link(admin)
    file_report(client, link["token"], report_body(site), files=[("a.png", samples.PNG, "image/png")])
    return {"site": site, "link": link, "token": link["token"]}


READS = ["/api/incidents", "/api/incidents/1", "/api/incidents/1/timeline", "/api/incidents/1/comments",
         "/api/incidents/export", "/api/attachments/1", "/api/kiosks", "/api/auth/me", "/api/sites",
         "/api/users", "/api/users/assignable", "/api/actions", "/api/osha/log?siteId=1&year=2024",
         "/api/osha/incidents/1/cases"]


@pytest.mark.parametrize("path", READS)
def test_a_link_token_reads_nothing_but_its_configuration(filed, client, path):
    response = client.get(path, headers={HEADER: filed["token"]}, status=401)
    assert_error(response, 401)
    assert filed["token"] not in response.text


WRITES = [
    ("post", "/api/incidents", {"title": "Via token", "type": "hazard", "severity": "low",
                                "occurredAt": "2024-05-01T08:15:00Z", "siteId": 1}),
    ("post", "/api/incidents/1/comments", {"body": "Hello"}),
    ("post", "/api/incidents/1/transitions", {"to": "triage"}),
    ("patch", "/api/incidents/1", {"title": "Changed"}),
    ("post", "/api/kiosks", {"name": "Another link"}),
    ("patch", "/api/kiosks/1", {"revoked": True}),
    ("post", "/api/sites", {"name": "New site"}),
]


@pytest.mark.parametrize(("method", "path", "body"), WRITES)
def test_a_link_token_changes_nothing_else(filed, admin, client, dbsession, method, path, body):
    headers = {HEADER: filed["token"]}
    response = getattr(client, f"{method}_json")(path, body, headers=headers, status="*")
    assert response.status_int == 401, response.body[:300]
    assert incident_count(dbsession) == 1
    incident = admin.get("/api/incidents/1").json
    assert incident["title"] == "Oil on the floor" and incident["status"] == "reported"
    assert admin.get("/api/incidents/1/comments").json == []
    assert [(link["name"], link["revoked"]) for link in admin.get(LINKS).json] == [("Gate tablet", False)]
    assert [site["name"] for site in admin.get("/api/sites").json] == ["Plant North"]


def test_a_link_token_cannot_upload_to_an_incident(filed, admin, client):
    response = client.post("/api/incidents/1/attachments", upload_files=[("file", "b.png", samples.PNG)],
                           headers={HEADER: filed["token"]}, status=401)
    assert_error(response, 401)
    assert len(admin.get("/api/incidents/1").json["attachments"]) == 1


@pytest.mark.parametrize(("method", "path"), [("post", CONFIG), ("get", REPORTS), ("put", REPORTS),
                                              ("delete", REPORTS), ("patch", CONFIG)])
def test_only_get_config_and_post_reports_exist_for_a_link(filed, client, method, path):
    response = getattr(client, method)(path, headers={HEADER: filed["token"]}, status="*")
    assert response.status_int >= 400


@pytest.mark.parametrize("token", ["", "wrong", "x" * 43, "x" * 65, "x" * 5000])
def test_a_wrong_token_is_refused_with_401(filed, client, dbsession, token):
    headers = {HEADER: token} if token else {}
    assert_error(client.get(CONFIG, headers=headers, status=401), 401)
    response = client.post(REPORTS, params=[("report", "{}")], content_type="multipart/form-data",
                           headers=headers, status=401)
    assert_error(response, 401)
    assert incident_count(dbsession) == 1


def test_a_link_token_elsewhere_than_the_header_grants_nothing(filed, client):
    token = filed["token"]
    client.get(f"{CONFIG}?token={token}", status=401)
    client.get(CONFIG, headers={"Authorization": f"Bearer {token}"}, status=401)
    client.get(CONFIG, headers={"Cookie": f"{HEADER}={token}"}, status=401)


def test_a_link_token_lifts_a_signed_in_reporter_to_nothing_more(filed, make_user):
    reporter = make_user("reporter")
    headers = {HEADER: filed["token"]}
    # the token does not lift the reporter to more than a reporter may do
    reporter.get("/api/incidents/1", headers=headers, status=404)
    reporter.get(LINKS, headers=headers, status=403)


# --- no CORS, and the origin check on reports (items 7, 21) -------------------------------------


@pytest.mark.parametrize("path", [CONFIG, REPORTS, "/api/incidents", LINKS])
@pytest.mark.parametrize("origin", [EVIL, "null", "http://ehs.test"])
def test_no_cors_preflight_is_ever_allowed(filed, client, path, origin):
    response = client.options(path, headers={
        "Origin": origin, "Access-Control-Request-Method": "POST",
        "Access-Control-Request-Headers": "x-kiosk-token, content-type"}, status="*")
    assert response.status_int >= 400
    assert not [name for name in response.headers if name.lower().startswith("access-control-")]


def test_kiosk_answers_allow_no_cross_origin_reading(filed, client):
    response = client.get(CONFIG, headers={HEADER: filed["token"], "Origin": EVIL}, status=200)
    assert not [name for name in response.headers if name.lower().startswith("access-control-")]
    response = file_report(client, filed["token"], report_body(filed["site"]), headers={"Origin": "http://ehs.test"})
    assert not [name for name in response.headers if name.lower().startswith("access-control-")]


@pytest.mark.parametrize("origin", [EVIL, "null", "http://ehs.test.evil.test", "https://ehs.test"])
def test_a_report_from_another_origin_is_refused(filed, client, dbsession, origin):
    response = file_report(client, filed["token"], report_body(filed["site"]),
                           files=[("a.png", samples.PNG, "image/png")], headers={"Origin": origin},
                           status=403)
    assert_error(response, 403)
    assert incident_count(dbsession) == 1


# --- the configuration a link reads -------------------------------------------------------------


def test_the_configuration_lists_the_organization_link_sites_and_areas(admin, client):
    north = new_site(admin, "Plant North")
    south = new_site(admin, "Plant South")
    dock = new_area(admin, north, "Loading dock")
    old_area = new_area(admin, north, "Old shed")
    admin.patch_json(f"/api/areas/{old_area}", {"archived": True}, status=200)
    closed = new_site(admin, "Closed plant")
    new_area(admin, closed, "Closed hall")
    admin.patch_json(f"/api/sites/{closed}", {"archived": True}, status=200)
    link = new_link(admin, "Gate tablet")

    config = kiosk_config(client, link["token"]).json
    assert config["organizationName"] == "Acme Works"
    assert config["linkName"] == "Gate tablet"
    sites = {site["id"]: site for site in config["sites"]}
    assert set(sites) == {north, south}  # no archived site
    assert sites[north]["name"] == "Plant North"
    assert [area["id"] for area in sites[north]["areas"]] == [dock]  # no archived area
    assert sites[north]["areas"][0]["name"] == "Loading dock"
    assert sites[south]["areas"] == []
    assert link["token"] not in kiosk_config(client, link["token"]).text


def test_a_link_tied_to_a_site_sees_only_that_site(admin, client):
    north = new_site(admin, "Plant North")
    south = new_site(admin, "Plant South")
    dock = new_area(admin, south, "Loading dock")
    new_area(admin, north, "Workshop")
    link = new_link(admin, "South gate", site_id=south)
    config = kiosk_config(client, link["token"]).json
    assert [site["id"] for site in config["sites"]] == [south]
    assert [area["id"] for area in config["sites"][0]["areas"]] == [dock]

    admin.patch_json(f"{LINKS}/{link['id']}", {"siteId": north}, status=200)
    config = kiosk_config(client, link["token"]).json
    assert [site["id"] for site in config["sites"]] == [north]
    assert config["linkName"] == "South gate"


def test_a_site_archived_after_the_link_was_tied_to_it_is_no_longer_offered(admin, client):
    north = new_site(admin, "Plant North")
    link = new_link(admin, site_id=north)
    admin.patch_json(f"/api/sites/{north}", {"archived": True}, status=200)
    assert kiosk_config(client, link["token"]).json["sites"] == []
