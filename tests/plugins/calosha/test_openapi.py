"""The California plugin's routes are in the OpenAPI document of an
application that enables it, each with the schema that validates it."""

from __future__ import annotations

from ehs_core.testing import Client
from tests.core.test_openapi import registered_operations


def test_every_calosha_route_is_described(app):
    doc = Client(app["wsgi_app"]).get("/api/openapi.json").json
    described = {(path, method) for path, ops in doc["paths"].items() for method in ops}
    ours = {op for op in registered_operations(app) if op[0].startswith("/api/calosha/")}
    assert len(ours) == 5 and ours <= described
    assert {("/api/obligations", "get"), ("/api/obligations/{id}/done", "post")} <= described
    log = doc["paths"]["/api/calosha/violent-incident-log"]["get"]
    assert {p["name"] for p in log["parameters"]} >= {"siteId", "from", "to"}
    body = doc["paths"]["/api/calosha/incidents/{number}/violence"]["put"]["requestBody"]
    schema = body["content"]["application/json"]["schema"]
    assert {"violenceType", "incidentKinds", "completedByTitle"} <= set(schema["required"])
