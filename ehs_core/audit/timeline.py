"""An incident's audit trail as the timeline endpoint and the incident page
show it: oldest first, only the entries the caller may read (`readable`:
the restricted actions of plugins), each with its actor's name (none for an
anonymous report)."""

from __future__ import annotations

import datetime as dt
import functools
from collections.abc import Callable
from typing import Any, NamedTuple

from pyramid.i18n import Localizer, TranslationString, TranslationStringFactory
from pyramid.request import Request
from sqlalchemy import (
    ColumnElement,
    Integer,
    Select,
    String,
    bindparam,
    case,
    cast,
    literal,
    null,
    select,
    union_all,
)

from ehs_core.audit import readable
from ehs_core.audit.models import AuditEntry
from ehs_core.db import constant, read_rows
from ehs_core.incidents.models import Comment, Incident
from ehs_core.incidents.resources import known_context
from ehs_core.incidents.serialize import shown_names
from ehs_core.rowsjson import DOCUMENT, INSTANT, columns_of, decoder, json_rows

# How each kind of entry reads on the page (translated in the core's domain).
_ = TranslationStringFactory("ehs")
SUMMARIES = {
    "incident.created": _("Reported"),
    "incident.updated": _("Details changed"),
    "incident.transitioned": _("Moved on"),
    "investigation.created": _("Investigation started"),
    "investigation.updated": _("Investigation updated"),
    "root_cause.created": _("Root cause added"),
    "root_cause.updated": _("Root cause changed"),
    "root_cause.deleted": _("Root cause removed"),
    "action.created": _("Corrective action added"),
    "action.updated": _("Corrective action changed"),
    "attachment.created": _("File added"),
    "attachment.deleted": _("File removed"),
    "follow_up.to_reporter": _("Message to the reporter"),
    "follow_up.from_reporter": _("Answer from the reporter"),
}
# The entries whose changes a summary reads (`summary`).
MOVED = "incident.transitioned"
UPDATED_SUFFIX = ".updated"
ANONYMOUS = _("Anonymous")  # who wrote an entry of an anonymous report
SOMEONE = _("Someone")  # who wrote a comment of a person no longer known
MOVED_TO = _("moved to %(status)s")  # a comment written with a transition
SOMEONE_WORD = _("someone")  # a person no longer known, in a changed value
YES, NO = _("yes"), _("no")


def translated(localizer: Localizer, message: TranslationString) -> str:
    """`localizer.translate(message)`."""
    return localizer.translate(message)


class HistoryRow(NamedTuple):
    """An audit entry as the incident page reads it (plain columns)."""

    id: int
    at: dt.datetime
    actor_id: int | None
    action: str
    changes: dict[str, Any] | None


class CommentRow(NamedTuple):
    """A comment as the incident page reads it (plain columns)."""

    id: int
    created_at: dt.datetime
    author_id: int | None
    body: str
    transition_to: str | None


# A changed field as the history names it (issue #36 item 12).
FIELD_WORDS = {
    "title": _("Title"), "type": _("Type"), "severity": _("Severity"), "siteId": _("Site"),
    "areaId": _("Area"), "locationDetail": _("Place"), "description": _("Description"),
    "immediateAction": _("Immediate action"), "occurredAt": _("Occurred"), "status": _("Status"),
    "assigneeId": _("Assignee"), "dueDate": _("Due"), "leadId": _("Lead"), "method": _("Method"),
    "summary": _("Summary"), "completed": _("Completed"), "category": _("Category"), "whys": _("Whys"),
    "kind": _("Kind"), "rootCauseId": _("Root cause"), "filename": _("File"),
}
# What "which" an entry is about: the action, root cause or file it names.
NAMED = {"action.": "title", "root_cause.": "description", "attachment.": "filename"}


def summary(localizer: Localizer, action: str, changes: dict[str, Any] | None,
            value: Callable[[str, Any], str] | None = None, which: str | None = None) -> str:
    """"Moved on: triage → investigation"; "Details changed: Severity:
    medium → high", in the localizer's language. `value(field, raw)` words
    a changed value for a reader who may see the incident (the page: names
    for ids, labels for codes); without it only the fields are named.
    `which`: the action, root cause or file the entry is about."""
    words = SUMMARIES.get(action)
    text = (translated(localizer, words) if words is not None
            else action.replace(".", " ").replace("_", " "))
    if which:
        text = f"{text} “{which}”"
    # Only a transition and an update say what moved (a report's
    # changes, every field it was given, are not listed).
    transitioned = action == MOVED
    if not changes or not (transitioned or action.endswith(UPDATED_SUFFIX)):
        return text
    status = changes.get("status")
    if transitioned:
        return _moved(text, status) if isinstance(status, dict) else text
    names = sorted(name for name in changes if name != "id")  # an action's id says nothing
    if isinstance(status, dict) and names == ["status"]:
        return _moved(text, status)
    if value is None or not names:
        return f"{text}: {', '.join(names)}" if names else text
    parts = []
    for name in names:
        change = changes[name]
        label = translated(localizer, FIELD_WORDS[name]) if name in FIELD_WORDS else name
        if isinstance(change, dict) and set(change) == {"old", "new"}:
            parts.append(f"{label}: {value(name, change['old'])} → {value(name, change['new'])}")
        else:
            parts.append(label)
    return f"{text}: {'; '.join(parts)}"


def which_of(action: str, changes: dict[str, Any] | None) -> str | None:
    """The name an entry's own changes give the thing it is about (an
    action's title when it was added), else None."""
    if not changes:
        return None
    for prefix, field_name in NAMED.items():
        if action.startswith(prefix):
            change = changes.get(field_name)
            if isinstance(change, dict):
                named = change.get("new") or change.get("old")
                return named if isinstance(named, str) else None
    return None


def _moved(text: str, status: dict[str, Any]) -> str:
    return f"{text}: {status.get('old')} → {status.get('new')}".replace("_", " ")


def audit_entries(request: Request, incident: Incident) -> list[AuditEntry]:
    """The incident's entries the caller may read, oldest first."""
    return readable(request, list(request.dbsession.execute(
        select(AuditEntry).where(AuditEntry.incident_id == incident.id)
        .order_by(AuditEntry.at, AuditEntry.id)).scalars()))


@functools.cache
def summarised_changes() -> ColumnElement[Any]:
    """An entry's changes, except where its summary never reads them (the
    core's entries of a thing created or removed): the page is not sent
    what it does not show. A report's entry holds every field it was given,
    and the reports, investigations, causes and actions created were three
    quarters of a history's JSON, each parsed into a dict of its own. A
    plugin's entries keep theirs."""
    unread = ["incident.created", "investigation.created"]
    return case((AuditEntry.action.in_([constant(action) for action in unread]), null()),
                else_=AuditEntry.changes)


@functools.cache
def _comments_and_history() -> Select[Any]:
    """The statement, built once (building it cost as much as running it)."""
    incident = bindparam("incident", type_=Integer)
    history = select(literal("a").label("kind"), AuditEntry.id, AuditEntry.at.label("at"),
                     AuditEntry.actor_id.label("who"), AuditEntry.action.label("text"),
                     cast(null(), String).label("transition_to"), summarised_changes().label("changes")
                     ).where(AuditEntry.incident_id == incident)
    said = select(literal("c"), Comment.id, Comment.created_at, Comment.author_id, Comment.body,
                  Comment.transition_to, cast(null(), AuditEntry.changes.type)
                  ).where(Comment.incident_id == incident)
    both = union_all(history, said).subquery()
    return select(both).order_by(both.c.at, both.c.id)


@functools.cache
def comments_column() -> ColumnElement[Any]:
    return select(json_rows(*columns_of(CommentRow, Comment))).where(
        Comment.incident_id == Incident.id).scalar_subquery()


@functools.cache
def history_column() -> ColumnElement[Any]:
    return select(json_rows(*columns_of(HistoryRow, AuditEntry, changes=summarised_changes()))).where(
        AuditEntry.incident_id == Incident.id).scalar_subquery()


_comments = decoder(CommentRow, order=("created_at", "id"), created_at=INSTANT)
_history = decoder(HistoryRow, order=("at", "id"), at=INSTANT, changes=DOCUMENT)


def comments_and_history(request: Request, incident: Incident,
                         ) -> tuple[list[CommentRow], list[HistoryRow], dict[int, str]]:
    """The incident page's comments and history (the entries the caller may
    read), oldest first, and the names of the people who wrote them (an
    entry's `actor_id` is None for an anonymous report): read with the
    incident by the page's statement (`includeme`: `read_with_detail`),
    else in one statement of plain rows; the names are the worker's
    reference data, told apart where two people bear one (`shown_names`)."""
    context = known_context(request, incident)
    read_with = context.page.read if context is not None and context.page is not None else {}
    if "timeline.comments" in read_with:
        comments = _comments(read_with["timeline.comments"])
        history = _history(read_with["timeline.history"])
    else:
        rows = read_rows(request, _comments_and_history(), {"incident": incident.id}).all()
        comments = [CommentRow(r.id, r.at, r.who, r.text, r.transition_to) for r in rows if r.kind == "c"]
        history = [HistoryRow(r.id, r.at, r.who, r.text, r.changes) for r in rows if r.kind == "a"]
    entries = readable(request, history)
    names = shown_names(request, {c.author_id for c in comments} | {e.actor_id for e in entries})
    return comments, entries, names
