"""One place per operation: a report filed through the JSON API and the
same report filed through a kiosk link run the same filing function, fire
the same events and leave the same audit entry; a file kept from either
face goes through the same storage function and is audited alike."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from sqlalchemy import select

from ehs_core.attachments import storage
from ehs_core.audit.models import AuditEntry
from ehs_core.events import AfterCommit, AttachmentAdded, Event, IncidentCreated
from ehs_core.incidents import filing
from ehs_core.incidents.models import Incident
from tests.core.attachments import samples
from tests.plugins.kiosk.support import file_report, new_link, new_site, report_body

PNG = ("photo.png", samples.PNG, "image/png")


class Recorder:
    """Every event published, with the functions on the stack at that moment."""

    def __init__(self) -> None:
        self.seen: list[tuple[type, set[Any]]] = []

    def __call__(self, event: Any) -> None:
        codes, frame = set(), inspect.currentframe()
        while frame is not None:
            codes.add(frame.f_code)
            frame = frame.f_back
        self.seen.append((type(event), codes))

    def types(self) -> list[str]:
        """The names of the events in the order they were published."""
        return [kind.__name__ for kind, _ in self.seen]

    def published_from(self, kind: type, function: Callable[..., Any]) -> bool:
        return any(seen is kind and function.__code__ in codes for seen, codes in self.seen)

    def clear(self) -> None:
        self.seen.clear()


@pytest.fixture
def events(registry: Any) -> Iterator[Recorder]:
    recorder = Recorder()
    for base in (Event, AfterCommit):
        registry.registerHandler(recorder, (base,))
    yield recorder
    for base in (Event, AfterCommit):
        registry.unregisterHandler(recorder, (base,))


def audit_of(dbsession: Any, reference: str) -> list[tuple[str, int | None, dict]]:
    number = int(reference.removeprefix("INC-"))
    incident_id = dbsession.execute(select(Incident.id).where(Incident.number == number)).scalar()
    return [(entry.action, entry.actor_id, entry.changes) for entry in dbsession.execute(
        select(AuditEntry).where(AuditEntry.incident_id == incident_id).order_by(AuditEntry.id)).scalars()]


def test_the_api_and_a_kiosk_link_file_a_report_through_the_same_function(admin, new_client, dbsession,
                                                                          events):
    site = new_site(admin)
    token = new_link(admin, "Gate tablet")["token"]
    body = report_body(site, description="Near the press", anonymous=True)

    events.clear()
    by_api = admin.post_json("/api/incidents", body, status=201).json
    api_events = events.types()
    assert events.published_from(IncidentCreated, filing.file_incident)

    events.clear()
    kiosk_body = {key: value for key, value in body.items() if key != "anonymous"} | {"reporterName": ""}
    by_kiosk = file_report(new_client(), token, kiosk_body).json
    kiosk_events = events.types()
    assert events.published_from(IncidentCreated, filing.file_incident)

    assert api_events == kiosk_events == ["IncidentCreated", "AfterIncidentCreated"]
    api_trail = audit_of(dbsession, by_api["reference"])
    assert api_trail == audit_of(dbsession, by_kiosk["reference"])
    [(action, actor, changes)] = api_trail
    assert (action, actor) == ("incident.created", None)  # anonymous: nobody recorded, either way
    assert changes["title"] == {"old": None, "new": "Oil on the floor"}
    assert changes["anonymous"] == {"old": None, "new": True}


def test_a_file_from_the_api_and_from_a_kiosk_link_is_kept_by_the_same_function(admin, new_client, dbsession,
                                                                                 events):
    site = new_site(admin)
    token = new_link(admin, "Gate tablet")["token"]
    # Named reports: an anonymous one keeps no file name (from either face).
    by_api = admin.post_json("/api/incidents", report_body(site), status=201).json
    events.clear()
    admin.post(f"/api/incidents/{by_api['number']}/attachments", upload_files=[("file", *PNG)], status=201)
    assert events.types() == ["AttachmentAdded", "AfterAttachmentAdded"]
    assert events.published_from(AttachmentAdded, storage.save_upload)
    events.clear()
    by_kiosk = file_report(new_client(), token, report_body(site) | {"reporterName": "Sam"}, files=[PNG]).json
    assert events.types() == ["IncidentCreated", "AttachmentAdded", "AfterIncidentCreated",
                              "AfterAttachmentAdded"]
    assert events.published_from(AttachmentAdded, storage.save_upload)
    api_entry = audit_of(dbsession, by_api["reference"])[-1]
    kiosk_entry = audit_of(dbsession, by_kiosk["reference"])[-1]
    assert api_entry[0] == kiosk_entry[0] == "attachment.created"
    assert api_entry[2]["filename"] == kiosk_entry[2]["filename"] == {"old": None, "new": "photo.png"}
    assert api_entry[1] == admin.get("/api/auth/me").json["user"]["id"]  # the signed-in uploader
    assert kiosk_entry[1] is None  # a kiosk link records nobody
