"""Typed events: in-transaction listeners run once, inside the transaction,
and may veto; the After… twin reaches only its own listeners, after commit,
and carries the event's fields."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

import transaction
from pyramid.registry import Registry

from ehs_core.events import AfterCommit, AfterIncidentCreated, Event, IncidentCreated, publish
from tests.core.incidents import file_report, new_site, report


def listen(registry: Any, kind: type, handler: Any) -> Any:
    registry.registerHandler(handler, (kind,))
    return lambda: registry.unregisterHandler(handler, (kind,))


def test_a_twin_reaches_only_its_own_listeners_after_commit(admin, registry, caplog):
    site = new_site(admin)["id"]
    seen: list[tuple[str, Any]] = []
    stop = [listen(registry, IncidentCreated, lambda e: seen.append(("in", e.incident.number))),
            listen(registry, AfterIncidentCreated, lambda e: seen.append(("after", e.incident.number)))]
    caplog.set_level(logging.ERROR)
    try:
        for _ in range(2):  # the second time, the classes' interface specs are cached
            number = file_report(admin, site)["number"]
    finally:
        for undo in stop:
            undo()
    # The report is numbered in the filing transaction: both see the number.
    assert seen == [("in", number - 1), ("after", number - 1), ("in", number), ("after", number)]
    assert "Error in hook" not in caplog.text


def test_an_in_transaction_listener_vetoes_by_raising(admin, registry):
    site = new_site(admin)["id"]
    before = admin.get("/api/incidents").json["total"]

    def veto(event: IncidentCreated) -> None:
        raise RuntimeError("not today")

    undo = listen(registry, IncidentCreated, veto)
    try:
        report(admin, site, status=500)
    finally:
        undo()
    assert admin.get("/api/incidents").json["total"] == before


class AfterPinged(AfterCommit):
    pass


@dataclass(eq=False)
class Pinged(Event):
    after = AfterPinged
    times: int


def test_a_twin_nobody_listens_to_is_not_handed_to_the_events_listeners():
    registry = Registry("test")
    request = SimpleNamespace(registry=registry, tm=transaction.TransactionManager())
    seen = []
    registry.registerHandler(lambda e: seen.append(type(e).__name__), (Pinged,))
    for times in (1, 2):
        request.tm.begin()
        publish(request, Pinged(request, times=times))
        request.tm.commit()
    assert seen == ["Pinged", "Pinged"]
    twin = AfterPinged(Pinged(request, times=3))
    assert (twin.times, twin.request) == (3, request)
