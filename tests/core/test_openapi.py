"""The published API description covers every registered /api route."""

from __future__ import annotations

import pytest
import webtest

from ehs_core.config import configure
from ehs_core.openapi import _placeholders


def registered_operations(registry) -> set[tuple[str, str]]:
    found = set()
    introspector = registry.introspector
    for route in introspector.get_category("routes"):
        intr = route["introspectable"]
        if not intr["pattern"].startswith("/api/"):
            continue
        for view in introspector.related(intr):
            if view.category_name != "views" or not view["request_methods"]:
                continue
            methods = view["request_methods"]
            for method in [methods] if isinstance(methods, str) else methods:
                found.add((_placeholders(intr["pattern"])[0], method.lower()))
    return found


def test_every_registered_api_route_is_described(client, registry):
    doc = client.get("/api/openapi.json").json
    described = {(path, method) for path, ops in doc["paths"].items() for method in ops}
    registered = registered_operations(registry)
    assert len(registered) > 50
    assert registered <= described
    assert doc["openapi"].startswith("3.1")


def test_request_bodies_come_from_the_validating_schemas(client):
    doc = client.get("/api/openapi.json").json
    create = doc["paths"]["/api/incidents"]["post"]["requestBody"]["content"]["application/json"]["schema"]
    assert create["required"] == ["title", "type", "severity", "occurredAt", "siteId"]
    assert create["properties"]["severity"]["enum"] == ["low", "medium", "high", "critical"]
    assert create["properties"]["occurredAt"]["format"] == "date-time"
    query = {p["name"]: p for p in doc["paths"]["/api/incidents"]["get"]["parameters"]}
    assert query["pageSize"]["schema"] == {"type": "integer", "minimum": 1, "maximum": 100}
    upload = doc["paths"]["/api/incidents/{number}/attachments"]["post"]["requestBody"]
    assert "multipart/form-data" in upload["content"]


def test_errors_share_one_documented_shape(client):
    doc = client.get("/api/openapi.json").json
    error = doc["components"]["schemas"]["Error"]
    assert error["required"] == ["error"]
    login = doc["paths"]["/api/auth/login"]["post"]
    assert login["security"] == []
    assert login["responses"]["429"]["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/Error"}
    assert doc["paths"]["/api/users"]["get"]["security"] == [{"sessionCookie": []}]
    assert doc["paths"]["/api/kiosk/reports"]["post"]["security"] == [{"kioskToken": []}]


@pytest.mark.parametrize("plugins, present, absent", [
    ("osha", "/api/osha/log", "/api/kiosks"),
    ("kiosk analytics", "/api/kiosks", "/api/osha/log"),
])
def test_the_document_follows_the_enabled_plugins(app_settings, plugins, present, absent):
    config = configure(dict(app_settings, **{"ehs.plugins": plugins}))
    doc = webtest.TestApp(config.make_wsgi_app()).get("/api/openapi.json").json
    assert present in doc["paths"]
    assert absent not in doc["paths"]


def test_the_document_states_what_the_server_checks(client):
    doc = client.get("/api/openapi.json").json
    setup = doc["paths"]["/api/setup"]["post"]["requestBody"]["content"]["application/json"]["schema"]
    assert setup["properties"]["password"]["minLength"] == 10
    assert setup["properties"]["password"]["maxLength"] == 1024
    assert setup["additionalProperties"] is False  # unknown fields are refused
    incident = doc["paths"]["/api/incidents"]["post"]["requestBody"]["content"]["application/json"]["schema"]
    assert incident["properties"]["title"]["maxLength"] == 200
    assert "not in the future" in incident["properties"]["occurredAt"]["description"]
    action = doc["paths"]["/api/incidents/{number}/actions"]["post"]["requestBody"]["content"]
    due = action["application/json"]["schema"]["properties"]["dueDate"]
    assert due["format"] == "date" and due["pattern"].startswith("^(19")
    query = {p["name"]: p for p in doc["paths"]["/api/incidents"]["get"]["parameters"]}
    assert query["type"]["schema"]["type"] == "array"  # ?type=injury&type=illness
    assert "Repeat" in query["type"]["schema"]["description"]


def test_the_investigation_put_declares_both_answers_it_gives(client):
    doc = client.get("/api/openapi.json").json
    assert {"200", "201"} <= set(doc["paths"]["/api/incidents/{number}/investigation"]["put"]["responses"])


def test_an_undeclared_method_answers_405_with_allow(admin):
    response = admin.delete("/api/incidents", status=405)
    assert response.json == {"error": "DELETE is not allowed here"}
    assert response.headers["Allow"] == "GET, HEAD, POST"
    response = admin.post_json("/api/incidents/1/investigation", {}, status=405)
    assert response.headers["Allow"] == "PUT"
