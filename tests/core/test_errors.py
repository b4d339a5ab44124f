"""One JSON error shape under /api, and no internals in a 500."""

from __future__ import annotations

import logging

import pytest

from ehs_core.auth import views as auth_views
from ehs_core.testing import PASSWORD


def test_unknown_api_route_is_a_json_404(client):
    for path in ("/api/nothing-here", "/api/auth/nothing", "/api"):
        response = client.get(path, status=404)
        assert response.content_type == "application/json"
        assert response.json == {"error": "Not found"}


def test_known_route_with_an_unsupported_method_is_a_json_error(client):
    response = client.delete("/api/auth/login", expect_errors=True)
    assert 400 <= response.status_int < 500
    assert response.content_type == "application/json"
    assert set(response.json) == {"error"}


def test_unknown_page_outside_the_api_is_a_plain_404(client):
    response = client.get("/no-such-page", status=404)
    assert response.content_type == "text/plain"


@pytest.mark.parametrize("body", [b"{", b'{"email": "a@b.test",}', b"\xff\xfe", b"{'email': 1}"])
def test_malformed_json_is_a_400_with_issues(client, body):
    response = client.post("/api/auth/login", body, content_type="application/json", status=400)
    assert response.json["error"]
    assert response.json["issues"] == [{"path": "", "message": "Malformed JSON"}]


@pytest.mark.parametrize("body", [b"[]", b'"text"', b"42", b"null", b"true", b""])
def test_json_that_is_not_an_object_is_a_400_with_issues(client, body):
    response = client.post("/api/auth/login", body, content_type="application/json", status=400)
    assert response.json["issues"] == [{"path": "", "message": "The body must be a JSON object"}]


def test_validation_failure_lists_every_field_with_its_path(client):
    response = client.post_json("/api/setup", {"organizationName": 5, "name": "",
                                               "email": "no", "password": "short"}, status=400)
    assert response.json["error"] == "Invalid request"
    issues = {issue["path"]: issue["message"] for issue in response.json["issues"]}
    assert set(issues) == {"organizationName", "name", "email", "password"}
    assert issues["organizationName"] == "Must be a string"
    assert all(isinstance(message, str) and message for message in issues.values())
    assert client.get("/api/setup").json == {"needsSetup": True}


def test_strings_are_not_coerced_from_other_json_types(client):
    response = client.post_json("/api/auth/login", {"email": ["a@b.test"], "password": 1234567890},
                                status=400)
    paths = {issue["path"] for issue in response.json["issues"]}
    assert paths == {"email", "password"}


def test_unexpected_error_is_a_generic_500_without_internals(client, monkeypatch, caplog):
    def broken(request):
        raise RuntimeError("secret internal detail at /srv/ehs/db.py")

    monkeypatch.setattr(auth_views, "needs_setup", broken)
    caplog.set_level(logging.ERROR, logger="ehs_core")
    response = client.get("/api/setup", status=500)
    assert response.json == {"error": "Internal server error"}
    assert response.content_type == "application/json"
    assert b"Traceback" not in response.body
    assert b"secret internal detail" not in response.body
    assert b"RuntimeError" not in response.body
    # the operator still gets the traceback in the log
    assert "secret internal detail" in caplog.text


def test_a_failed_request_changes_nothing(client, monkeypatch):
    """A 500 during setup rolls back what the request had already written."""

    def broken(request, user, status=200):
        raise RuntimeError("boom")

    monkeypatch.setattr(auth_views, "signed_in", broken)
    client.post_json("/api/setup", {"organizationName": "Acme", "name": "Ada",
                                    "email": "ada@acme.test", "password": PASSWORD}, status=500)
    monkeypatch.undo()
    assert client.get("/api/setup").json == {"needsSetup": True}
