"""Tests of the analytics plugin: the overview, the analytics page's figures,
saved views, and what happens when the plugin (or the OSHA plugin it reads
rates from) is disabled.

Every figure is checked against a small, hand-counted set of incidents filed
through the API with explicit `occurredAt` values. The test server's zone
(ehs.timezone) is UTC, so calendar days and weeks below are UTC days.

The helpers below are shared by the modules of this package.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from ehs_core.incidents.models import Incident
from ehs_core.testing import PASSWORD, Client, file_report, new_area, new_site

__all__ = ["new_area", "new_site"]

INCIDENTS = "/api/incidents"
OVERVIEW = "/api/stats/overview"
ANALYTICS = "/api/stats/analytics"
VIEWS = "/api/views"
ADMIN_EMAIL = "admin@acme.test"

UTC = dt.UTC
STATUSES = ("reported", "triage", "investigation", "actions", "verification", "closed")


# --- time ---------------------------------------------------------------------------------


def now() -> dt.datetime:
    return dt.datetime.now(UTC)


def today() -> dt.date:
    """Today in the test server's zone (UTC)."""
    return now().date()


def day(offset: int) -> dt.date:
    return today() + dt.timedelta(days=offset)


def midnight(day: dt.date) -> dt.datetime:
    """The first instant of a UTC day."""
    return dt.datetime.combine(day, dt.time(), UTC)


def stamp(moment: dt.datetime) -> str:
    return moment.isoformat()


# --- sites, reports, workflow ---------------------------------------------------------------


def report(browser: Any, site_id: int, occurred: str | dt.datetime, type: str = "hazard",
           **fields: Any) -> int:
    """File a report and return its number."""
    if isinstance(occurred, dt.datetime):
        occurred = stamp(occurred)
    return file_report(browser, site_id, occurredAt=occurred, type=type, **fields).json["number"]


def move(browser: Any, number: int, *statuses: str) -> None:
    """Walk an incident through the given statuses, one transition each."""
    for to in statuses:
        browser.post_json(f"{INCIDENTS}/{number}/transitions", {"to": to}, status=200)


def add_root_cause(browser: Any, number: int, category: str) -> dict:
    body = {"category": category, "description": "Found in the review", "whys": ["Why?"]}
    return browser.post_json(f"{INCIDENTS}/{number}/root-causes", body, status=201).json


def add_action(browser: Any, number: int, due: dt.date | None = None, assignee_id: int | None = None,
               title: str = "Fix it") -> dict:
    body: dict[str, Any] = {"title": title, "assigneeId": assignee_id}
    if due is not None:
        body["dueDate"] = due.isoformat()
    return browser.post_json(f"{INCIDENTS}/{number}/actions", body, status=201).json


def set_action_status(browser: Any, action_id: int, status: str) -> dict:
    return browser.patch_json(f"/api/actions/{action_id}", {"status": status}, status=200).json


def add_case(manager: Any, number: int, **answers: Any) -> dict:
    """An injury/illness case (OSHA plugin); recordable when work-related, new and
    meeting a criterion such as medical treatment or days away."""
    body = {"name": "Pat Doe", **answers}
    return manager.post_json(f"/api/osha/incidents/{number}/cases", body, status=201).json


def put_hours(manager: Any, site_id: int, year: int, months: dict[int, int]) -> None:
    entries = [{"month": month, "hours": hours, "averageEmployees": 10} for month, hours in months.items()]
    manager.put_json(f"/api/osha/sites/{site_id}/hours?year={year}", entries, status=200)


def set_times(dbsession: Session, registry: Any, number: int, **values: dt.datetime) -> None:
    """Set timestamps the API sets to 'now' (created_at, closed_at) to known
    values, so durations can be counted by hand; the statistics' tallies are
    then counted again from the rows, as after any write made outside the
    service (`rebuild.rebuild`)."""
    dbsession.execute(update(Incident).where(Incident.number == number).values(**values))
    recount(dbsession, registry)


def recount(dbsession: Session, registry: Any) -> None:
    """Rebuild the statistics' tallies from the rows (after writing rows directly)."""
    from ehs_plugins.analytics.rebuild import rebuild_all

    rebuild_all(dbsession, registry)
    dbsession.commit()


def closed_at(dbsession: Session, number: int) -> dt.datetime:
    value = dbsession.execute(select(Incident.closed_at).where(Incident.number == number)).scalar()
    assert value is not None
    return value


# --- the statistics endpoints ------------------------------------------------------------------


def overview(browser: Any) -> dict:
    return browser.get(OVERVIEW, status=200).json


def analytics(browser: Any, first: dt.date | str, last: dt.date | str, status: int = 200,
              **params: Any) -> Any:
    query = {"from": str(first), "to": str(last), **{k: str(v) for k, v in params.items()}}
    response = browser.get(ANALYTICS, params=query, status=status)
    return response.json if status == 200 else response


def current(body: dict, group: str, key: str) -> Any:
    return body[group][key]["current"]


def heat_cells(body: dict) -> dict[tuple[int, int], int]:
    """The heatmap's non-zero cells as {(weekday, hour): count}, Monday = 0."""
    counts = body["heatmap"]["counts"]
    assert len(counts) == 7 and all(len(row) == 24 for row in counts)
    return {(d, h): n for d, row in enumerate(counts) for h, n in enumerate(row) if n}


def assert_error(response: Any, status: int) -> None:
    assert response.status_int == status, response.body[:300]
    assert response.content_type == "application/json"
    assert isinstance(response.json["error"], str) and response.json["error"]


def issue_paths(response: Any) -> set[str]:
    assert_error(response, 400)
    assert response.json["issues"]
    return {issue["path"] for issue in response.json["issues"]}


# --- a second application with other plugins enabled -----------------------------------------


@contextmanager
def app_with_plugins(registry: Any, app_settings: dict[str, Any], plugins: str) -> Iterator[Any]:
    """The application built with `ehs.plugins` = `plugins`, on the test's
    database transaction (so it sees what the main app wrote)."""
    from ehs_core.config import configure

    config = configure(dict(app_settings, **{"ehs.plugins": plugins}))
    config.registry["dbsession_factory"] = registry["dbsession_factory"]
    try:
        yield config.make_wsgi_app()
    finally:
        config.registry["db.engine"].dispose()


def signed_in(app: Any, email: str) -> Client:
    browser = Client(app)
    browser.login(email, PASSWORD)
    return browser
