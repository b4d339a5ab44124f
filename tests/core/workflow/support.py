"""Helpers shared by the workflow, investigation and action tests: a site,
reports, and walking an incident to a given status through the API."""

from __future__ import annotations

import datetime as dt
from email.message import Message
from typing import Any

import webtest

from ehs_core.testing import mail_text

STATUSES = ["reported", "triage", "investigation", "actions", "verification", "closed"]
ROLES = ["reporter", "supervisor", "safety_manager", "admin"]

# The spec's workflow table: (from, to) -> minimum role.
TABLE: dict[tuple[str, str], str] = {
    ("reported", "triage"): "supervisor",
    ("triage", "investigation"): "supervisor",
    ("triage", "actions"): "supervisor",
    ("triage", "closed"): "supervisor",
    ("investigation", "actions"): "supervisor",
    ("actions", "investigation"): "supervisor",
    ("actions", "verification"): "supervisor",
    ("verification", "actions"): "safety_manager",
    ("verification", "closed"): "safety_manager",
    ("closed", "investigation"): "safety_manager",
}


def rank(role: str) -> int:
    return ROLES.index(role)


def utc_today() -> dt.date:
    return dt.datetime.now(dt.UTC).date()


def day(offset: int) -> str:
    """A date `offset` days from today (the test server's zone is UTC)."""
    return (utc_today() + dt.timedelta(days=offset)).isoformat()


def new_site(browser: webtest.TestApp, name: str = "Plant North") -> int:
    return browser.post_json("/api/sites", {"name": name}, status=201).json["id"]


def report(browser: webtest.TestApp, site_id: int, severity: str = "low", **body: Any) -> dict:
    occurred = (dt.datetime.now(dt.UTC) - dt.timedelta(hours=2)).isoformat()
    payload = {"title": "Oil on the floor", "type": "hazard", "severity": severity,
               "occurredAt": occurred, "siteId": site_id, **body}
    return browser.post_json("/api/incidents", payload, status=201).json


def detail(browser: webtest.TestApp, number: int, status: int = 200) -> dict:
    return browser.get(f"/api/incidents/{number}", status=status).json


def move(browser: webtest.TestApp, number: int, to: str, note: str | None = None,
         status: int = 200) -> webtest.TestResponse:
    body: dict[str, Any] = {"to": to}
    if note is not None:
        body["note"] = note
    return browser.post_json(f"/api/incidents/{number}/transitions", body, status=status)


def add_root_cause(browser: webtest.TestApp, number: int, expect: int = 201, **body: Any) -> dict:
    payload = {"category": "equipment", "description": "Worn seal", "whys": ["The seal was old"], **body}
    return browser.post_json(f"/api/incidents/{number}/root-causes", payload, status=expect).json


def add_action(browser: webtest.TestApp, number: int, expect: int = 201, **body: Any) -> dict:
    payload = {"title": "Replace the seal", **body}
    return browser.post_json(f"/api/incidents/{number}/actions", payload, status=expect).json


def set_action(browser: webtest.TestApp, action_id: int, expect: int = 200, **body: Any) -> dict:
    return browser.patch_json(f"/api/actions/{action_id}", body, status=expect).json


def comments(browser: webtest.TestApp, number: int) -> list[dict]:
    return browser.get(f"/api/incidents/{number}/comments").json


def timeline(browser: webtest.TestApp, number: int) -> list[dict]:
    return browser.get(f"/api/incidents/{number}/timeline").json


def entries(browser: webtest.TestApp, number: int, action: str) -> list[dict]:
    return [entry for entry in timeline(browser, number) if entry["action"] == action]


def bring_to(admin: webtest.TestApp, number: int, target: str) -> None:
    """Walk a fresh (reported) incident to `target` through allowed moves,
    meeting each condition on the way (actions are left unassigned)."""
    if target == "reported":
        return
    move(admin, number, "triage")
    if target == "triage":
        return
    if target == "investigation":
        move(admin, number, "investigation")
        return
    move(admin, number, "actions")
    if target == "actions":
        return
    action = add_action(admin, number)
    set_action(admin, action["id"], status="done")
    move(admin, number, "verification")
    if target == "verification":
        return
    assert target == "closed"
    set_action(admin, action["id"], status="verified")
    move(admin, number, "closed")


def body_of(message: Message) -> str:
    return mail_text(message)
