"""Request-origin check against cross-site request forgery.

Form, multipart and body-less unsafe requests need an Origin equal to the
public URL (other bodies without one are refused as not JSON, 415); JSON
bodies are allowed without Origin (browsers send them cross-site only after a
preflight the service never grants), but a wrong Origin is refused everywhere.
A refused request has no effect.
"""

from __future__ import annotations

import json

import pytest

from ehs_core.testing import PASSWORD, Client
from tests.core.auth.support import bare_client, create_user, session_cookie

EVIL = "https://evil.test"
SETUP_BODY = {"organizationName": "Acme", "name": "Ada", "email": "ada@acme.test",
              "password": PASSWORD}


@pytest.fixture
def no_origin(registry, dbsession):
    return bare_client(registry["wsgi_app"])


@pytest.fixture
def bob(admin):
    return create_user(admin, "bob@acme.test")


def assert_refused(response) -> None:
    assert response.status_int == 403
    assert response.content_type == "application/json"
    assert set(response.json) == {"error"}


def needs_setup(client) -> bool:
    return client.get("/api/setup").json["needsSetup"]


@pytest.mark.parametrize("origin", [
    EVIL,
    "https://ehs.test",  # scheme differs
    "http://ehs.test.evil.test",  # suffix trick
    "https://ehs.test.evil.test",
    "http://evil.test.ehs.test",
    "http://ehs.test:8080",  # port differs
    "null",  # sandboxed frame, file:// page
    "",
])
def test_logout_with_a_foreign_origin_is_refused_and_keeps_the_session(bob, new_client, origin):
    browser = new_client()
    browser.login("bob@acme.test")
    response = browser.post("/api/auth/logout", headers={"Origin": origin}, expect_errors=True)
    assert_refused(response)
    assert not [h for h in response.headers.getall("Set-Cookie") if "service_session" in h]
    browser.get("/api/auth/me", status=200)


def test_body_less_post_without_origin_is_refused(bob, new_client, no_origin):
    browser = new_client()
    browser.login("bob@acme.test")
    cookie = session_cookie(browser)
    response = no_origin.post("/api/auth/logout", headers={"Cookie": f"service_session={cookie}"},
                              expect_errors=True)
    assert_refused(response)
    browser.get("/api/auth/me", status=200)


def test_body_less_post_with_the_right_origin_is_allowed(bob, new_client):
    browser = new_client()
    browser.login("bob@acme.test")
    browser.post("/api/auth/logout", status=204)
    browser.get("/api/auth/me", status=401)


def test_empty_body_labelled_json_still_needs_origin(bob, new_client, no_origin):
    browser = new_client()
    browser.login("bob@acme.test")
    cookie = session_cookie(browser)
    response = no_origin.post("/api/auth/logout", "", content_type="application/json",
                              headers={"Cookie": f"service_session={cookie}"}, expect_errors=True)
    assert_refused(response)
    browser.get("/api/auth/me", status=200)


def test_empty_json_body_without_origin_to_a_json_endpoint_is_a_400(client, no_origin):
    response = no_origin.post("/api/setup", "", content_type="application/json", status=400)
    assert response.json["issues"] == [{"path": "", "message": "The body must be a JSON object"}]
    assert needs_setup(client)


def test_form_post_with_a_foreign_origin_is_refused(client):
    response = client.post("/api/setup", SETUP_BODY, headers={"Origin": EVIL}, expect_errors=True)
    assert_refused(response)
    assert needs_setup(client)


def test_form_post_without_origin_is_refused(client, no_origin):
    response = no_origin.post("/api/setup", SETUP_BODY, expect_errors=True)
    assert_refused(response)
    assert needs_setup(client)


def test_form_post_with_the_right_origin_is_still_not_accepted_as_json(client):
    response = client.post("/api/setup", SETUP_BODY, status=415)
    assert set(response.json) == {"error"}
    assert needs_setup(client)


def test_multipart_post_with_a_foreign_origin_is_refused(client):
    response = client.post("/api/setup", SETUP_BODY, headers={"Origin": EVIL},
                           upload_files=[("file", "evil.png", b"\x89PNG\r\n\x1a\n")],
                           expect_errors=True)
    assert_refused(response)
    assert needs_setup(client)


def test_multipart_post_without_origin_is_refused(client, no_origin):
    response = no_origin.post("/api/setup", SETUP_BODY,
                              upload_files=[("file", "evil.png", b"\x89PNG\r\n\x1a\n")],
                              expect_errors=True)
    assert_refused(response)
    assert needs_setup(client)


def test_json_without_origin_is_allowed(bob, no_origin):
    response = no_origin.post_json("/api/auth/login", {"email": "bob@acme.test", "password": PASSWORD},
                                   status=200)
    assert response.json["user"]["email"] == "bob@acme.test"
    no_origin.get("/api/auth/me", status=200)


def test_json_with_a_foreign_origin_is_refused(client):
    response = client.post_json("/api/setup", SETUP_BODY, headers={"Origin": EVIL},
                                expect_errors=True)
    assert_refused(response)
    assert needs_setup(client)


def test_json_sent_as_text_plain_without_origin_is_415_and_not_processed(client, no_origin):
    response = no_origin.post("/api/setup", json.dumps(SETUP_BODY), content_type="text/plain",
                              status=415)
    assert response.json == {"error": "Send the body as application/json"}
    assert needs_setup(client)
    assert session_cookie(no_origin) is None


def test_json_sent_as_text_plain_with_the_right_origin_is_415_and_not_processed(client):
    response = client.post("/api/setup", json.dumps(SETUP_BODY), content_type="text/plain",
                           status=415)
    assert set(response.json) == {"error"}
    assert needs_setup(client)
    assert session_cookie(client) is None


def test_text_plain_login_does_not_sign_in(bob, client):
    client.post("/api/auth/login", json.dumps({"email": "bob@acme.test", "password": PASSWORD}),
                content_type="text/plain", status=415)
    assert session_cookie(client) is None
    client.get("/api/auth/me", status=401)


def test_refused_cross_origin_magic_link_request_sends_no_mail(bob, client, inbox):
    response = client.post_json("/api/auth/magic-link", {"email": "bob@acme.test"},
                                headers={"Origin": EVIL}, expect_errors=True)
    assert_refused(response)
    assert inbox.settle() == []


@pytest.mark.parametrize("method", ["put", "patch", "delete"])
def test_other_unsafe_methods_are_checked_too(bob, admin, method):
    call = getattr(admin, method)
    response = call(f"/api/users/{bob['id']}", headers={"Origin": EVIL}, expect_errors=True)
    assert_refused(response)


def test_cross_origin_admin_change_has_no_effect(bob, admin):
    response = admin.patch_json(f"/api/users/{bob['id']}", {"active": False},
                                headers={"Origin": EVIL}, expect_errors=True)
    assert_refused(response)
    [user] = [u for u in admin.get("/api/users").json if u["id"] == bob["id"]]
    assert user["active"] is True


def test_safe_methods_need_no_origin(no_origin):
    no_origin.get("/api/health", status=200)
    no_origin.get("/auth/magic", status=200)
    no_origin.get("/api/health", headers={"Origin": EVIL}, status=200)


@pytest.fixture
def app_with_default_port(app_settings, registry, dbsession):
    """The application configured with the public URL written with its
    default port, as operators sometimes do."""
    from ehs_core.config import configure

    config = configure(dict(app_settings, **{"ehs.public_url": "http://ehs.test:80"}))
    config.registry["dbsession_factory"] = registry["dbsession_factory"]
    yield config.make_wsgi_app()
    config.registry["db.engine"].dispose()


def test_public_url_with_its_default_port_still_matches_the_browsers_origin(bob, app_with_default_port):
    """Browsers never write a default port in Origin (RFC 6454 4), so
    http://ehs.test:80 and Origin http://ehs.test are the same site."""
    browser = Client(app_with_default_port, origin="http://ehs.test")
    browser.post_json("/api/auth/login", {"email": "bob@acme.test", "password": PASSWORD}, status=200)
    browser.post("/api/auth/logout", status=204)


def test_a_form_posted_from_this_service_at_another_address_says_what_to_set(client):
    """`pserve` on another port than the public URL's: the refusal tells the
    developer which setting to change instead of a bare 403."""
    response = client.post("/api/setup", SETUP_BODY, expect_errors=True,
                           headers={"Origin": "http://localhost:7000", "Host": "localhost:7000"})
    assert_refused(response)
    assert "EHS_PUBLIC_URL" in response.json["error"]
    assert "http://localhost:7000" in response.json["error"]
    assert needs_setup(client)


@pytest.mark.parametrize(("configured", "port", "expected"), [
    ("http://127.0.0.1:6543", "7000", "http://127.0.0.1:7000"),
    ("http://localhost:6543", "7001", "http://localhost:7001"),
    ("http://127.0.0.1:6543", None, "http://127.0.0.1:6543"),
    ("https://ehs.example.com", "7000", "https://ehs.example.com"),  # a real host keeps its URL
])
def test_a_development_public_url_follows_the_served_port(configured, port, expected, monkeypatch):
    from ehs_core import served_public_url

    monkeypatch.delenv("EHS_PUBLIC_URL", raising=False)
    global_config = {"http_port": port} if port else {}
    assert served_public_url(global_config, {"ehs.public_url": configured})["ehs.public_url"] == expected


def test_an_explicit_public_url_wins_over_the_served_port(monkeypatch):
    from ehs_core import served_public_url

    monkeypatch.setenv("EHS_PUBLIC_URL", "http://127.0.0.1:6543")
    settings = {"ehs.public_url": "http://127.0.0.1:6543"}
    assert served_public_url({"http_port": "7000"}, settings)["ehs.public_url"] == "http://127.0.0.1:6543"
