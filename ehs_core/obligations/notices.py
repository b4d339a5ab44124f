"""The reminder before an obligation's due time and the alert once it is
overdue, each sent once: the periodic job claims an obligation by setting
its marker (`reminded_at`, `alerted_at`) in an UPDATE that only a row
without it matches, and writes the mail to the outbox in the same
transaction. Two runs at once cannot both claim a row, and a run that
fails leaves neither the marker nor the mail."""

from __future__ import annotations

import datetime as dt
from typing import Any

from pyramid.i18n import Localizer
from pyramid.registry import Registry
from sqlalchemy import select, update

from ehs_core.db import utcnow
from ehs_core.incidents.models import Incident, reference
from ehs_core.jobs import wake
from ehs_core.mail import Localized, default_locale, queue_mail, render, translate
from ehs_core.obligations import kinds
from ehs_core.obligations.models import Obligation, ObligationStatus
from ehs_core.security import ROLE_ORDER, Role, role_at_least
from ehs_core.sites.models import Site
from ehs_core.ui import shipped
from ehs_core.ui.rendering import when
from ehs_core.users.models import User

NOTICE_JOB = "obligations.notices"


def _plural(singular: str, plural: str) -> tuple[str, str]:
    """Marks a message with a plural for extraction (`make messages`)."""
    return singular, plural


def span(delta: dt.timedelta, localizer: Localizer | None = None) -> str:
    """"1 day 3 hours", "2 hours 5 minutes", "40 minutes" (in the
    localizer's language when one is given)."""
    minutes = max(int(delta.total_seconds() // 60), 0)
    days, rest = divmod(minutes, 24 * 60)
    hours, minutes = divmod(rest, 60)
    words = {"day": _plural("${n} day", "${n} days"), "hour": _plural("${n} hour", "${n} hours"),
             "minute": _plural("${n} minute", "${n} minutes")}

    def unit(n: int, word: str) -> str:
        if localizer is not None:
            one, many = words[word]
            return localizer.pluralize(one, many, n, domain="ehs", mapping={"n": n})
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
    (supervisors at least: they see every incident). Each mail goes to the
    outbox in the transaction that sets the marker, under a key of its own
    (notice, obligation, due time, recipient): sent once for that due time
    even if the job runs twice, and again when the due time moves later
    (`services.open_obligation` clears the markers then). Returns how many
    mails were queued."""
    now = now or utcnow()
    known = kinds(registry)
    public_url = registry.settings["ehs.public_url"]
    queued = 0
    with registry["dbsession_factory"]() as dbsession, dbsession.begin():
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
        people = dbsession.execute(select(User.organization_id, User.email, User.role, User.locale).where(
            User.active.is_(True), User.organization_id.in_(organizations))).all() if rows else []
        for obligation, number, timezone in rows:
            kind = known[obligation.kind]
            overdue = obligation.due_at <= now
            marker = Obligation.alerted_at if overdue else Obligation.reminded_at
            if not _claim(dbsession, obligation.id, marker, now):
                continue
            least = max(kind.handled_by, Role.supervisor, key=ROLE_ORDER.index)
            recipients = [(email, shipped(locale) or default_locale(registry))
                          for organization_id, email, role, locale in people
                          if organization_id == obligation.organization_id and role_at_least(role, least)]
            notice = "obligation_overdue" if overdue else "obligation_reminder"
            # One rendering per language among the recipients (issue #39).
            messages: dict[str, dict[str, str]] = {}
            for email, locale in recipients:
                if locale not in messages:
                    messages[locale] = render(
                        registry, notice, locale=locale, title=obligation.title,
                        about=translate(" for ${reference}", mapping={"reference": reference(number)})
                        if number is not None else "",
                        due=Localized(lambda _localizer, due_at=obligation.due_at, zone=timezone:
                                      when(due_at, zone, registry=registry)),
                        left=Localized(lambda localizer, delta=obligation.due_at - now:
                                       span(delta, localizer)),
                        fulfilled_by=kind.fulfilled_by or "-", public_url=public_url)
                key = f"{notice}:{obligation.id}:{obligation.due_at.isoformat()}:{email}"
                queue_mail(dbsession, registry, email, messages[locale], key=key)
                queued += 1
    if queued:
        wake(registry)
    return queued
