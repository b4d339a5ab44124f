"""The daily digest: each assignee gets one mail listing their open actions
due tomorrow or overdue. Run by the worker each morning (07:00 in the
server's zone) and by `ehs digest CONFIG`."""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from collections.abc import Callable
from typing import Any

from pyramid.registry import Registry
from sqlalchemy import or_, select

from ehs_core.actions import server_zone, today
from ehs_core.actions.models import PENDING, CorrectiveAction
from ehs_core.incidents.models import Incident
from ehs_core.mail import default_locale, localizer_for, queue_mail, render, translate
from ehs_core.ui import shipped
from ehs_core.ui.rendering import day, in_locale
from ehs_core.users.models import User

DIGEST_HOUR = 7


def daily_schedule(registry: Registry) -> Callable[[dt.datetime], bool]:
    def due(moment: dt.datetime) -> bool:
        local = moment.replace(tzinfo=dt.UTC).astimezone(server_zone(registry))
        return local.hour == DIGEST_HOUR and local.minute == 0
    return due


def send_digests(registry: Registry) -> int:
    """Queue one digest per assignee (outbox rows written in one
    transaction, each under the key of its day and assignee, so a digest
    job run again after a crash, or `ehs digest` run the same day, mails
    nobody twice); returns how many were queued."""
    on = today(registry)
    tomorrow = on + dt.timedelta(days=1)
    factory = registry["dbsession_factory"]
    with factory() as dbsession, dbsession.begin():
        rows = dbsession.execute(
            select(CorrectiveAction, Incident, User)
            .join(Incident, Incident.id == CorrectiveAction.incident_id)
            .join(User, User.id == CorrectiveAction.assignee_id)
            .where(CorrectiveAction.status.in_(PENDING), User.active.is_(True),
                   or_(CorrectiveAction.due_date < on, CorrectiveAction.due_date == tomorrow))
            .order_by(User.id, CorrectiveAction.due_date, CorrectiveAction.id)).all()
        queued = _queue(registry, dbsession, rows, on)
    return queued


def _queue(registry: Registry, dbsession: Any, rows: list[Any], on: dt.date) -> int:
    per_user: dict[int, list] = defaultdict(list)
    users = {}
    for action, incident, user in rows:
        per_user[user.id].append((action, incident))
        users[user.id] = user
    public_url = registry.settings["ehs.public_url"]
    for user_id, items in per_user.items():
        locale = shipped(users[user_id].locale)
        with in_locale(locale or default_locale(registry)):
            localizer = localizer_for(registry, locale or default_locale(registry))
            overdue = localizer.translate(translate(", OVERDUE"))
            lines = "\n".join(
                "- " + localizer.translate(translate(
                    "${reference}: ${title} (due ${due}${overdue})", mapping={
                        "reference": incident.reference, "title": action.title, "due": day(action.due_date),
                        "overdue": overdue if action.due_date < on else ""}))
                + f"\n  {public_url}/actions/{action.id}"
                for action, incident in items)
            rows = [{"reference": incident.reference, "title": action.title, "due": day(action.due_date),
                     "overdue": action.due_date < on, "url": f"{public_url}/actions/{action.id}",
                     "incident_url": f"{public_url}/incidents/{incident.number}"}
                    for action, incident in items]
        message = render(registry, "action_digest", locale=locale, name=users[user_id].name, count=len(items),
                         lines=lines, items=rows, public_url=public_url)
        queue_mail(dbsession, registry, users[user_id].email, message, key=f"digest:{on}:{user_id}")
    return len(per_user)
