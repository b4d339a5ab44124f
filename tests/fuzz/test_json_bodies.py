"""Arbitrary JSON at every create and update body (hypothesis): values deep,
huge, of odd Unicode (lone surrogates, NUL, other scripts' digits), extreme
numbers and dates, under the fields each operation takes and under others.
Whatever arrives, the answer is never a 5xx, and a refusal leaves every
stored row as it was.

The operations come from the OpenAPI document, so a new create or update
endpoint is covered without being listed here. EHS_FUZZ_EXAMPLES bounds the
examples (four times as many per operation: each is one request).
"""

from __future__ import annotations

import json
import os
import re
from typing import Any

import pytest
import sqlalchemy as sa
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

EXAMPLES = int(os.environ.get("EHS_FUZZ_EXAMPLES", "8"))
# Rows a refused request may still write: the caller's session (last seen)
# and the rate limiter's hits.
BOOKKEEPING = {"user_sessions", "rate_limit_hits"}

ODD_TEXT = st.sampled_from([
    "\ud800", "a\udfffb", "\x00", "x\x00y", "\u202e\u0645\u0631\u062d\u0628\u0627", "\ufeff",
    "\u0661\u0662\u0663\u0664\u0665\u0666\u0667\u0668\u0669", "\uff11\uff12\uff13\uff14\uff15",
    "\U0001f4a5" * 50, "\r\nBcc: evil@example.com", " ", "", "x" * 30_000,
])
EXTREME_MOMENTS = st.sampled_from([
    "0001-01-01T00:00:00Z", "0001-01-01T00:00:00+23:59", "9999-12-31T23:59:59-23:59",
    "9999-12-31T23:59:59.999999+00:00", "1969-12-31T23:59:59Z", "2026-02-30T10:00:00Z",
    "2026-01-05T08:00:00", "2026-01-05T08:00:00+05:30:15", "0001-01-01", "9999-12-31",
    "2026-13-01", "1900-01-01", "2026-01-05T25:00:00Z", "2026-01-05T08:00:00+01:00", "2026-01-05",
])
NUMBERS = st.one_of(
    st.integers(min_value=-(2**70), max_value=2**70),
    st.sampled_from([0, -1, 1, 2**31, -(2**31) - 1, 2**63, 10**300]),
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from([1e308, -1e308, 5e-324, 0.5]),
)
SCALARS = st.one_of(st.none(), st.booleans(), NUMBERS, st.text(max_size=40), ODD_TEXT, EXTREME_MOMENTS)
JSON = st.recursive(SCALARS, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8), inner, max_size=4)), max_leaves=12)
# Raw texts json.dumps would not write: nesting bombs, constants JSON lacks,
# numbers too long to convert.
RAW = st.sampled_from([
    b"[" * 5000 + b"]" * 5000, b'{"a":' * 900 + b"1" + b"}" * 900, b"NaN", b"-Infinity",
    b"1" * 5000, b"{" * 100_000, b'"\\ud800"', b"\xff\xfe", b"",
])


def plausible(name: str, prop: dict[str, Any], ids: dict[str, int]) -> Any:
    """A value the operation would accept for a field (so that one odd
    value elsewhere reaches as deep into the code as it can)."""
    kinds = prop.get("type") if isinstance(prop.get("type"), list) else [prop.get("type")]
    if prop.get("enum"):
        return next(value for value in prop["enum"] if value is not None)
    if name in ids:
        return ids[name]
    if prop.get("format") == "date-time":
        return "2026-01-05T08:00:00+01:00"
    if prop.get("format") == "date":
        return "2026-01-05"
    if name == "email":
        return "fuzz@acme.test"
    if "string" in kinds:
        return "a long fuzz password" if prop.get("minLength", 0) >= 10 else "Fuzz"
    if "boolean" in kinds:
        return False
    if "integer" in kinds or "number" in kinds:
        return max(1, prop.get("minimum", 1))
    if "array" in kinds:
        return []
    return None


def body_strategy(schema: dict[str, Any], ids: dict[str, int]) -> st.SearchStrategy[bytes]:
    """Bodies for one operation: a valid body with some fields replaced or
    added (the fields it takes and others) by arbitrary values, or any JSON,
    or raw text."""
    item = schema.get("items", schema)
    properties = item.get("properties") or {}
    base = {name: plausible(name, properties[name], ids) for name in item.get("required", [])}
    odd = st.one_of(ODD_TEXT, EXTREME_MOMENTS, NUMBERS, JSON)
    keys = st.sampled_from(sorted(properties)) if properties else st.text(max_size=8)
    changes = st.one_of(st.dictionaries(keys, odd, min_size=1, max_size=2),
                        st.dictionaries(st.one_of(keys, st.text(max_size=8)), odd, min_size=1, max_size=3))
    obj = changes.map(lambda extra: base | extra)
    top = st.lists(obj, min_size=1, max_size=13) if schema.get("type") == "array" else obj
    encoded = st.one_of(top, top, top, top, JSON).map(lambda v: json.dumps(v).encode())
    return st.one_of(encoded, encoded, encoded, RAW)


@pytest.fixture
def world(admin, make_user):
    """One of everything a create or update path names, by path."""
    reporter = make_user("reporter")
    site = admin.post_json("/api/sites", {"name": "Fuzz plant"}).json
    area = admin.post_json(f"/api/sites/{site['id']}/areas", {"name": "Line 1"}).json
    incident = admin.post_json("/api/incidents", {
        "title": "Seed", "type": "injury", "severity": "low",
        "occurredAt": "2026-01-05T08:00:00+01:00", "siteId": site["id"]}).json
    number = incident["number"]
    cause = admin.post_json(f"/api/incidents/{number}/root-causes",
                            {"category": "Equipment", "description": "Worn seal"}).json
    action = admin.post_json(f"/api/incidents/{number}/actions", {"title": "Fix"}).json
    case = admin.post_json(f"/api/osha/incidents/{number}/cases", {"name": "Pat"}).json
    kiosk = admin.post_json("/api/kiosks", {"name": "Gate"}).json
    return {
        "/api/sites/{id}": site["id"], "/api/sites/{id}/areas": site["id"],
        "/api/areas/{id}": area["id"], "/api/users/{id}": reporter.user["id"],
        "/api/root-causes/{id}": cause["id"], "/api/actions/{id}": action["id"],
        "/api/osha/cases/{id}": case["id"], "/api/kiosks/{id}": kiosk["id"],
        "/api/osha/sites/{id}/hours": site["id"], "{number}": number,
        "fields": {"siteId": site["id"], "areaId": area["id"], "assigneeId": reporter.user["id"],
                   "leadId": reporter.user["id"], "rootCauseId": cause["id"], "month": 1},
    }


def operations(doc: dict[str, Any]) -> list[tuple[str, str, dict[str, Any], list[dict]]]:
    found = []
    for path, ops in doc["paths"].items():
        for method, op in ops.items():
            content = (op.get("requestBody") or {}).get("content", {})
            if method in ("post", "put", "patch") and "application/json" in content:
                found.append((method, path, content["application/json"]["schema"], op["parameters"]))
    return found


def snapshot(connection: Any) -> dict[str, list[tuple]]:
    tables = sorted(set(sa.inspect(connection).get_table_names()) - BOOKKEEPING)
    return {table: sorted(map(tuple, connection.exec_driver_sql(f'SELECT * FROM "{table}"')), key=repr)
            for table in tables if not table.startswith("alembic")}


def property_of(call: Any, target: str, bodies: st.SearchStrategy[bytes], connection: Any) -> Any:
    """The property for one operation, as a hypothesis test."""

    @given(body=bodies)
    @settings(max_examples=EXAMPLES * 4, deadline=None, derandomize=True, database=None,
              suppress_health_check=list(HealthCheck), phases=[Phase.explicit, Phase.generate])
    def run(body: bytes) -> None:
        before = snapshot(connection)
        response = call(target, body, content_type="application/json", expect_errors=True)
        assert response.status_int < 500, (response.status, response.text[:300], body[:300])
        assert response.content_type == "application/json"
        if response.status_int >= 400:
            assert "error" in response.json
            assert snapshot(connection) == before, (response.status, body[:300])

    return run


def test_arbitrary_json_never_gets_a_5xx_and_a_refusal_changes_nothing(admin, world, dbsession):
    doc = admin.get("/api/openapi.json").json
    found = operations(doc)
    assert len(found) > 20
    connection = dbsession.connection()
    failures = []
    for method, path, schema, parameters in found:
        url = re.sub(r"\{number\}", str(world["{number}"]), path)
        url = re.sub(r"\{id\}", str(world.get(path, 1)), url)
        query = "?year=2025" if any(p["name"] == "year" and p["in"] == "query" for p in parameters) else ""

        run = property_of(getattr(admin, method), url + query, body_strategy(schema, world["fields"]),
                          connection)
        try:
            run()
        except Exception as exc:  # every operation is tried; the list fails the test once
            failures.append(f"{method.upper()} {path}: {str(exc).strip()[:500]}")
    assert failures == []
