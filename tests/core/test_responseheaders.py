"""Every /api answer is kept out of caches and from content sniffing: JSON
with injury and medical data, error answers, refusals before any view runs,
and the answers of plugins, which cannot forget the headers."""

import pytest

from tests.core.workflow.support import new_site, report


def assert_private(response):
    assert "no-store" in response.headers["Cache-Control"]
    assert response.headers["X-Content-Type-Options"] == "nosniff"
    # each once, whether the view set its own or not
    assert len(response.headers.getall("Cache-Control")) == 1
    assert len(response.headers.getall("X-Content-Type-Options")) == 1


def test_answers_with_injury_data_are_not_stored_by_caches(admin):
    site = new_site(admin)
    number = report(admin, site, type="injury")["number"]
    case = admin.post_json(f"/api/osha/incidents/{number}/cases", {"name": "Pat Doe"}).json
    for path in (f"/api/incidents/{number}", f"/api/osha/incidents/{number}/cases",
                 f"/api/osha/cases/{case['id']}/301", f"/api/osha/log?siteId={site}&year=2024",
                 "/api/incidents",
                 "/api/stats/overview", "/api/auth/me", "/api/users", "/api/incidents/export"):
        assert_private(admin.get(path))


@pytest.mark.parametrize(("method", "path", "status"), [
    ("GET", "/api/incidents", 401),  # refused by the security policy
    ("GET", "/api/no-such-route", 404),
    ("POST", "/api/auth/login", 400),  # refused by body validation
])
def test_refusals_carry_the_headers_too(client, method, path, status):
    response = client.request(path, method=method, status=status,
                              headers={"Content-Type": "application/json"},
                              body=b"{}" if method == "POST" else b"")
    assert_private(response)


def test_pages_outside_the_api_keep_their_own_headers(client):
    response = client.get("/auth/magic")
    assert response.headers["Cache-Control"] == "no-store"


def test_redirects_lead_to_the_configured_public_url_whatever_the_host_header(admin, new_client):
    """A redirect's absolute Location was built from the request's Host
    header (security reference item 11: links use the configured base URL,
    not Host)."""
    from ehs_core.testing import PUBLIC_URL

    browser = new_client()
    for host in ("evil.test", "ehs.test.evil.test:8443", "localhost"):
        asked = browser.get("/incidents/7", headers={"Host": host}, status=302)
        assert asked.location == f"{PUBLIC_URL}/sign-in?next=%2Fincidents%2F7"
        out = admin.post("/sign-out", headers={"Host": host}, status=302)
        assert out.location.startswith(f"{PUBLIC_URL}/sign-in")
        admin.login("admin@acme.test")
