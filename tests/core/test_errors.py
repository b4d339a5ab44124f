"""One JSON error shape under /api, and no internals in a 500."""

from __future__ import annotations

import logging

import pytest
from pyramid_retry import RetryableException

from ehs_core.auth import signin
from ehs_core.auth import views as auth_views
from ehs_core.testing import PASSWORD, PUBLIC_URL


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


def test_unknown_page_outside_the_api_is_the_404_page(client):
    response = client.get("/no-such-page", status=404)
    assert response.content_type == "text/html" and "Page not found" in response.text


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

    monkeypatch.setattr(signin, "needs_setup", broken)
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


def failing_once(monkeypatch, module, name):
    """Make `module.name` raise a retryable error (a serialization failure,
    a dropped connection) on its first call only."""
    original = getattr(module, name)
    calls = []

    def flaky(*args, **kwargs):
        calls.append(1)
        if len(calls) == 1:
            raise RetryableException("could not serialize access")
        return original(*args, **kwargs)

    monkeypatch.setattr(module, name, flaky)
    return calls


def test_a_request_without_a_body_is_run_again_after_a_retryable_error(client, monkeypatch):
    """pyramid_retry runs the request again (ehs_core.intake.retry_attempts
    gives a body-less request an empty body to replay instead of a copy)."""
    calls = failing_once(monkeypatch, signin, "needs_setup")
    assert client.get("/api/setup").json == {"needsSetup": True}
    assert len(calls) == 2


def test_a_request_with_a_body_is_run_again_with_the_same_body(client, monkeypatch):
    calls = failing_once(monkeypatch, auth_views, "signed_in")
    response = client.post_json("/api/setup", {"organizationName": "Acme", "name": "Ada",
                                               "email": "ada@acme.test", "password": PASSWORD}, status=201)
    assert response.json["user"]["email"] == "ada@acme.test"
    assert len(calls) == 2
    # the first attempt's writes were rolled back (or the second would have
    # found the organization set up and refused); the admin signs in
    assert client.get("/api/setup").json == {"needsSetup": False}
    client.post_json("/api/auth/login", {"email": "ada@acme.test", "password": PASSWORD}, status=200)


# --- bad input is a 4xx, never a 500 (ehs_core.validation.parse_json, ehs_core.intake) ---


def test_json_nested_very_deep_is_a_400_not_a_recursion_error(client):
    body = b"[" * 100_000 + b"]" * 100_000
    response = client.post("/api/auth/login", body, content_type="application/json", status=400)
    assert "Nested too deeply" in response.json["issues"][0]["message"]
    response = client.post_json("/api/auth/login", {"email": {"a": {"b": {"c": {"d": {"e": {
        "f": {"g": {"h": {}}}}}}}}}, "password": "x"}, status=400)
    assert response.json["issues"][0]["path"].startswith("email.a.b")


def test_a_lone_surrogate_in_any_string_is_a_400(admin):
    body = b'{"name": "Plant \\ud800 North"}'
    response = admin.post("/api/sites", body, content_type="application/json", status=400)
    assert response.json["issues"] == [
        {"path": "name", "message": "Must be valid Unicode text (no lone surrogate characters)"}]
    assert admin.get("/api/sites").json == []


@pytest.mark.parametrize(("body", "message"), [
    (b'{"name": NaN}', "Malformed JSON"),
    (b'{"name": Infinity}', "Malformed JSON"),
    (b'{"name": ' + b"9" * 5000 + b"}", "A number has too many digits"),
])
def test_numbers_json_does_not_have_are_a_400(admin, body, message):
    response = admin.post("/api/sites", body, content_type="application/json", status=400)
    assert response.json["issues"][0]["message"] == message


class Unreadable:
    """A request body that fails the test if anything reads it."""

    def read(self, *args):
        raise AssertionError("the body was read")

    readline = read


def test_a_body_over_the_limit_is_refused_with_413_before_it_is_read(client, registry):
    from webob import Request

    limit = registry.settings["ehs.max_json_kb"] * 1024
    for path in ("/api/auth/login", "/api/setup", "/api/incidents"):
        request = Request.blank(path, method="POST", headers={"Origin": PUBLIC_URL})
        request.environ.update({"CONTENT_TYPE": "application/json",
                                "CONTENT_LENGTH": str(150 * 1024 * 1024), "wsgi.input": Unreadable()})
        response = request.get_response(registry["wsgi_app"])
        assert response.status_int == 413
        assert response.json == {"error": "The body is too large (at most 1 MiB)"}
    # the JSON limit is far below the upload limit, which multipart bodies get
    assert limit < registry.settings["ehs.max_upload_mb"] * 1024 * 1024 / 4


def test_a_body_just_over_the_json_limit_is_413(client, registry):
    limit = registry.settings["ehs.max_json_kb"] * 1024
    body = b'{"email": "' + b"a" * limit + b'"}'
    client.post("/api/auth/login", body, content_type="application/json", status=413)


@pytest.mark.parametrize("query", ["q=%FF", "q=%ED%A0%80", "page=%C0%AF"])
def test_a_query_string_that_is_not_utf8_is_a_400(admin, query):
    response = admin.get(f"/api/incidents?{query}", status=400)
    assert response.json["issues"] == [{"path": "", "message": "The query string must be UTF-8 text"}]


def test_a_parameter_that_is_not_a_list_filter_must_be_given_once(admin):
    response = admin.get("/api/incidents?page=1&page=2", status=400)
    assert response.json["issues"] == [{"path": "page", "message": "Give this parameter once"}]


def test_colanders_wording_does_not_reach_the_user(admin):
    response = admin.post_json("/api/views", {"page": "incidents", "name": "Mine",
                                              "filters": "type=injury"}, status=400)
    assert response.json["issues"] == [{"path": "filters", "message": "Must be a JSON object"}]
    response = admin.post_json("/api/sites", {"name": "x" * 201}, status=400)
    assert response.json["issues"] == [{"path": "name", "message": "Must be at most 200 characters long"}]
