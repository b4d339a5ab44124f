"""The reminder before an obligation's due time and the alert once it is
overdue, each sent once: the periodic job claims an obligation by setting
its marker (`reminded_at`, `alerted_at`) in an UPDATE that only a row
without it matches, commits, and only then queues the mail. Two workers
running the job at once cannot both claim a row; a claim whose mail could
not be queued is logged, never sent twice."""

from __future__ import annotations

import datetime as dt
import logging
from typing import Any

from pyramid.registry import Registry
from sqlalchemy import select, update

from ehs_core.db import utcnow
from ehs_core.incidents.models import Incident, reference
from ehs_core.jobs import wake
from ehs_core.mail import queue_mail, render
from ehs_core.obligations import kinds
from ehs_core.obligations.models import Obligation, ObligationStatus
from ehs_core.security import ROLE_ORDER, Role, role_at_least
from ehs_core.sites.models import Site
from ehs_core.ui.rendering import when
from ehs_core.users.models import User

log = logging.getLogger(__name__)

NOTICE_JOB = "obligations.notices"


def span(delta: dt.timedelta) -> str:
    """"1 day 3 hours", "2 hours 5 minutes", "40 minutes"."""
    minutes = max(int(delta.total_seconds() // 60), 0)
    days, rest = divmod(minutes, 24 * 60)
    hours, minutes = divmod(rest, 60)

    def unit(n: int, word: str) -> str:
        return f"{n} {word}{'' if n == 1 else 's'}"

    if days:
        return unit(days, "day") + (f" {unit(hours, 'hour')}" if hours else "")
    if hours:
        return unit(hours, "hour") + (f" {unit(minutes, 'minute')}" if minutes else "")
    return unit(minutes, "minute")


def _claim(dbsession: Any, obligation_id: int, marker: Any, now: dt.datetime) -> bool:
    result = dbsession.execute(update(Obligation).where(
        Obligation.id == obligation_id, Obligation.status == ObligationStatus.open, marker.is_(None))
        .values({marker.key: now}))
    return result.rowcount == 1


def send_notices(registry: Registry, now: dt.datetime | None = None) -> int:
    """Remind of open obligations whose reminder time has come and alert of
    those past due, to the organization's active people who handle the kind
    (supervisors at least: they see every incident); returns how many mails
    were queued. Each mail is a row of the outbox written in the transaction
    that marks the obligation reminded or alerted: both happen, or neither."""
    now = now or utcnow()
    known = kinds(registry)
    public_url = registry.settings["ehs.public_url"]
    queued = 0
    with registry["dbsession_factory"]() as dbsession:
        rows = dbsession.execute(
            select(Obligation, Incident.number, Site.timezone)
            .outerjoin(Incident, Incident.id == Obligation.incident_id)
            .outerjoin(Site, Site.id == Obligation.site_id)
            .where(Obligation.status == ObligationStatus.open, Obligation.remind_at <= now,
                   Obligation.kind.in_(list(known)),
                   (Obligation.reminded_at.is_(None) & (Obligation.due_at > now))
                   | (Obligation.alerted_at.is_(None) & (Obligation.due_at <= now)))
            .order_by(Obligation.due_at, Obligation.id)).all()
        organizations = {obligation.organization_id for obligation, _, _ in rows}
        people = dbsession.execute(select(User.organization_id, User.email, User.role).where(
            User.active.is_(True), User.organization_id.in_(organizations))).all() if rows else []
        for obligation, number, timezone in rows:
            kind = known[obligation.kind]
            overdue = obligation.due_at <= now
            marker = Obligation.alerted_at if overdue else Obligation.reminded_at
            if not _claim(dbsession, obligation.id, marker, now):
                continue
            least = max(kind.handled_by, Role.supervisor, key=ROLE_ORDER.index)
            recipients = [email for organization_id, email, role in people
                          if organization_id == obligation.organization_id and role_at_least(role, least)]
            message = render(registry, "obligation_overdue" if overdue else "obligation_reminder",
                             title=obligation.title,
                             about=f" for {reference(number)}" if number is not None else "",
                             due=when(obligation.due_at, timezone, registry=registry),
                             left=span(obligation.due_at - now), fulfilled_by=kind.fulfilled_by or "-",
                             public_url=public_url)
            for email in recipients:
                queue_mail(dbsession, registry, email, message)
            queued += len(recipients)
        dbsession.commit()
    if queued:
        wake(registry)
    return queued
