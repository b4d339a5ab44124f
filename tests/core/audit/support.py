"""Helpers for the timeline and comment tests: a site, a report, a timeline."""

from __future__ import annotations

from typing import Any

OCCURRED = "2024-05-01T08:15:00+02:00"


def new_site(admin: Any, name: str = "Plant North") -> int:
    return admin.post_json("/api/sites", {"name": name}, status=201).json["id"]


def report_body(site_id: int, **extra: Any) -> dict[str, Any]:
    return {"title": "Oil on the floor", "type": "hazard", "severity": "low", "occurredAt": OCCURRED,
            "siteId": site_id, **extra}


def report(browser: Any, site_id: int, **extra: Any) -> int:
    return browser.post_json("/api/incidents", report_body(site_id, **extra), status=201).json["number"]


def timeline(browser: Any, number: int, status: int = 200) -> Any:
    return browser.get(f"/api/incidents/{number}/timeline", status=status).json


def actions_of(entries: list[dict]) -> list[str]:
    return [entry["action"] for entry in entries]


def assign_action(supervisor: Any, number: int, user_id: int, title: str = "Fix it") -> dict:
    return supervisor.post_json(f"/api/incidents/{number}/actions",
                                {"title": title, "assigneeId": user_id}, status=201).json
