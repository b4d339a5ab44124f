"""The operations on obligations: open one (once per kind and subject), close
it done or waived, and read what the caller may see. JSON views, pages,
plugins and the notice job all go through here.

Who sees an obligation: a person whose role handles its kind
(`add_obligation_kind(handled_by=...)`) and who may see its incident (the
incidents' own rule, `incidents.resources.reported_or_assigned`); anything
else answers 404, as a number that does not exist (ASVS 5 8.2.2). Waiving
one needs a safety manager (`waiver_role`): 403 below that.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from pyramid.request import Request
from sqlalchemy import Select, or_, select

from ehs_core.db import utcnow
from ehs_core.errors import Conflict, Forbidden, Invalid, NotFound
from ehs_core.events import actor, publish
from ehs_core.incidents.models import Incident, reference
from ehs_core.incidents.resources import reported_or_assigned, sees_everything
from ehs_core.obligations import ObligationKind, kinds, kinds_for, waiver_role
from ehs_core.obligations.events import ObligationClosed
from ehs_core.obligations.models import Obligation, ObligationStatus
from ehs_core.security import role_at_least
from ehs_core.sites.models import Site

# At most this many obligations in one answer (the oldest due first).
LIST_LIMIT = 500


class Filter(StrEnum):
    open = "open"
    overdue = "overdue"
    done = "done"
    waived = "waived"
    all = "all"




def incident_subject(incident_id: int) -> str:
    """The subject of an obligation owed on an incident itself."""
    return f"incident:{incident_id}"


def kind_of(request: Request, name: str) -> ObligationKind:
    found = kinds(request.registry).get(name)
    if found is None:
        raise ValueError(f"no obligation kind {name!r} is registered")
    return found


def remind_time(kind: ObligationKind, opened: dt.datetime, due: dt.datetime) -> dt.datetime:
    """When the reminder goes out: the kind's lead before the due time, or
    once three quarters of the time given have passed."""
    if kind.remind_before is not None:
        return due - kind.remind_before
    return due - max(due - opened, dt.timedelta(0)) / 4


def open_obligation(request: Request, kind: str, *, subject: str, due_at: dt.datetime,
                    incident: Any = None, organization_id: int | None = None,
                    site_id: int | None = None, title: str | None = None) -> Obligation:
    """Open the obligation of `kind` on `subject`, due at `due_at`, or return
    the one already there (one per kind and subject, however often the facts
    are saved). An open one takes the new due time (the facts behind the
    clock changed); a closed one stays closed."""
    found_kind = kind_of(request, kind)
    if incident is not None:
        organization_id = incident.organization_id
        site_id = site_id if site_id is not None else incident.site_id
    if organization_id is None:
        raise ValueError("an obligation needs an incident or an organization")
    dbsession = request.dbsession
    existing = dbsession.execute(select(Obligation).where(
        Obligation.organization_id == organization_id, Obligation.kind == kind,
        Obligation.subject == subject)).scalar()
    now = utcnow()
    if existing is not None:
        if existing.status == ObligationStatus.open and existing.due_at != due_at:
            if due_at > existing.due_at:  # a later clock: its notices are still to come
                existing.reminded_at = existing.alerted_at = None
            existing.due_at = due_at
            existing.remind_at = remind_time(found_kind, existing.created_at, due_at)
        return existing
    obligation = Obligation(
        organization_id=organization_id, kind=kind, subject=subject, title=title or found_kind.title,
        incident_id=incident.id if incident is not None else None, site_id=site_id,
        due_at=due_at, remind_at=remind_time(found_kind, now, due_at), status=ObligationStatus.open,
        created_at=now)
    dbsession.add(obligation)
    dbsession.flush()
    return obligation


def find(request: Request, kind: str, subject: str, organization_id: int) -> Obligation | None:
    return request.dbsession.execute(select(Obligation).where(
        Obligation.organization_id == organization_id, Obligation.kind == kind,
        Obligation.subject == subject)).scalar()


def withdraw(request: Request, kind: str, subject: str, organization_id: int, reason: str) -> None:
    """The facts no longer owe it (an answer was corrected): an open
    obligation is closed as waived with `reason`, kept for the record."""
    obligation = find(request, kind, subject, organization_id)
    if obligation is not None and obligation.status == ObligationStatus.open:
        obligation.status = ObligationStatus.waived
        obligation.done_at = utcnow()
        obligation.note = reason


def fulfil(request: Request, kind: str, subject: str, organization_id: int, done_at: dt.datetime,
           note: str | None = None) -> None:
    """The plugin's own records say it was done (a report's time entered on
    the case): an open obligation is closed as done then, by the caller."""
    obligation = find(request, kind, subject, organization_id)
    if obligation is not None and obligation.status == ObligationStatus.open:
        obligation.status = ObligationStatus.done
        obligation.done_at = done_at
        obligation.done_by_id = request.identity.user_id if request.identity is not None else None
        obligation.note = note


def visible(request: Request, stmt: Select) -> Select:
    """Narrow a statement on `Obligation` to what the caller may see."""
    identity = request.identity
    stmt = stmt.where(Obligation.organization_id == identity.account.organization_id,
                      Obligation.kind.in_(kinds_for(request.registry, identity.role)))
    if not sees_everything(identity):
        stmt = stmt.where(or_(Obligation.incident_id.is_(None), Obligation.incident_id.in_(
            select(Incident.id).where(reported_or_assigned(identity.user_id)))))
    return stmt


@dataclass(frozen=True)
class Owed:
    """An obligation as it is shown: with its incident's number and its
    site's zone (the establishment's clock, `sites.zones`)."""

    obligation: Obligation
    kind: ObligationKind
    incident_number: int | None
    timezone: str | None

    @property
    def reference(self) -> str | None:
        return reference(self.incident_number) if self.incident_number is not None else None

    def status(self, now: dt.datetime) -> str:
        obligation = self.obligation
        if obligation.status == ObligationStatus.open and obligation.due_at <= now:
            return Filter.overdue
        return obligation.status


def _read(request: Request, stmt: Select) -> list[Owed]:
    known = kinds(request.registry)
    rows = request.dbsession.execute(
        stmt.add_columns(Incident.number, Site.timezone)
        .outerjoin(Incident, Incident.id == Obligation.incident_id)
        .outerjoin(Site, Site.id == Obligation.site_id)).all()
    return [Owed(obligation, known[obligation.kind], number, timezone)
            for obligation, number, timezone in rows]


def list_owed(request: Request, status: str = Filter.open, limit: int = LIST_LIMIT) -> list[Owed]:
    """What the caller may see, by `status`: open (overdue ones too) and
    overdue by due time, soonest first; done, waived and all by when they
    were closed, latest first."""
    now = utcnow()
    stmt = visible(request, select(Obligation))
    if status in (Filter.open, Filter.overdue):
        stmt = stmt.where(Obligation.status == ObligationStatus.open)
        if status == Filter.overdue:
            stmt = stmt.where(Obligation.due_at <= now)
        stmt = stmt.order_by(Obligation.due_at, Obligation.id)
    else:
        if status in (Filter.done, Filter.waived):
            stmt = stmt.where(Obligation.status == status)
        stmt = stmt.order_by(Obligation.done_at.desc().nulls_first(), Obligation.due_at, Obligation.id)
    return _read(request, stmt.limit(limit))


def get_visible(request: Request, obligation_id: int) -> Owed:
    found = _read(request, visible(request, select(Obligation)).where(Obligation.id == obligation_id))
    if not found:
        raise NotFound()
    return found[0]


def _open_one(owed: Owed) -> Obligation:
    if owed.obligation.status != ObligationStatus.open:
        raise Conflict(f"This obligation is already {owed.obligation.status}.")
    return owed.obligation


def mark_done(request: Request, obligation_id: int, note: str | None = None,
              done_at: dt.datetime | None = None) -> Owed:
    """Close it as done: when (now, or the moment given: a call made before
    it was entered here), by whom, and how (a confirmation number, who took
    the call)."""
    owed = get_visible(request, obligation_id)
    obligation = _open_one(owed)
    now = utcnow()
    if done_at is not None and done_at > now:
        raise Invalid("doneAt", "The time it was done cannot be in the future.")
    obligation.status = ObligationStatus.done
    obligation.done_at = done_at or now
    obligation.done_by_id = request.identity.user_id
    obligation.note = note or None
    publish(request, ObligationClosed(request, obligation=obligation, actor_id=actor(request)))
    return owed


def waive(request: Request, obligation_id: int, reason: str) -> Owed:
    """Close it without doing it, saying why (the injury turned out not to
    be work-related, say); a safety manager's decision."""
    owed = get_visible(request, obligation_id)
    if not role_at_least(request.identity.role, waiver_role(owed.kind)):
        raise Forbidden("Only a safety manager may waive what is owed to a regulator.")
    obligation = _open_one(owed)
    if not reason.strip():
        raise Invalid("reason", "Say why it is not owed.")
    obligation.status = ObligationStatus.waived
    obligation.done_at = utcnow()
    obligation.done_by_id = request.identity.user_id
    obligation.note = reason
    publish(request, ObligationClosed(request, obligation=obligation, actor_id=actor(request)))
    return owed
