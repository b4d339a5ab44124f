"""What waits for a person: the incidents whose next step is theirs, their
open and overdue actions, and recent serious incidents. The home page and
the menu's counts read these; each is limited by the same visibility rule
as the incident list (`visible_incidents`)."""

from __future__ import annotations

import datetime as dt
import functools
from dataclasses import dataclass, field

from sqlalchemy import Integer, bindparam, case, func, or_, select
from sqlalchemy.orm import Session
from sqlalchemy.sql.elements import BindParameter, ColumnElement

from ehs_core.actions.models import PENDING, CorrectiveAction
from ehs_core.actions.services import open_actions_count
from ehs_core.db import constant, count_up_to
from ehs_core.incidents.models import Incident, Severity, Status
from ehs_core.incidents.resources import visible_incidents
from ehs_core.security import Identity, Role, role_at_least

# How far back "recent" serious incidents go.
RECENT = dt.timedelta(days=30)
SHOWN = 8


@dataclass
class Queues:
    triage: list[Incident] = field(default_factory=list)
    investigation: list[Incident] = field(default_factory=list)
    verification: list[Incident] = field(default_factory=list)
    actions: list[tuple[CorrectiveAction, Incident]] = field(default_factory=list)
    serious: list[Incident] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)


def waiting_for_lead(me: int | BindParameter[int]) -> ColumnElement[bool]:
    """Under investigation without a lead, or led by the person `me` (an id,
    or a bound parameter): along `ix_incidents_investigation_lead`, through
    the lead's copy on the incident (`Incident.investigation_lead_id`)."""
    return (Incident.status == constant(Status.investigation.value)) & or_(
        Incident.investigation_lead_id.is_(None), Incident.investigation_lead_id == me)


# Most severe first, then newest (issue #36 item 11): a critical injury
# reported this morning must not sit below a week of low hazards.
MOST_SEVERE_FIRST = case({severity.value: rank for rank, severity in enumerate(Severity)},
                         value=Incident.severity, else_=-1).desc()


def _incidents(dbsession: Session, identity: Identity, *conditions: object,
               most_severe_first: bool = False) -> tuple[list[Incident], int]:
    stmt = visible_incidents(select(Incident).where(
        Incident.organization_id == identity.account.organization_id, *conditions), identity)
    total = dbsession.execute(select(func.count()).select_from(
        stmt.with_only_columns(Incident.id).subquery())).scalar()
    order = (MOST_SEVERE_FIRST, Incident.number.desc()) if most_severe_first else (Incident.number.desc(),)
    rows = list(dbsession.execute(stmt.order_by(*order).limit(SHOWN)).scalars())
    return rows, total


def waiting_for(dbsession: Session, identity: Identity, today: dt.date) -> Queues:
    """The home page's lists for this person. Triage and investigation wait
    for supervisors (investigations led by someone else are theirs, not
    this person's); verification waits for safety managers, who alone may
    close after it (the workflow table)."""
    queues = Queues()
    role = identity.role
    if role_at_least(role, Role.supervisor):
        queues.triage, queues.counts["triage"] = _incidents(
            dbsession, identity, Incident.status.in_([constant(Status.reported.value),
                                                      constant(Status.triage.value)]),
            most_severe_first=True)
        queues.investigation, queues.counts["investigation"] = _incidents(
            dbsession, identity, waiting_for_lead(identity.user_id), most_severe_first=True)
    if role_at_least(role, Role.safety_manager):
        queues.verification, queues.counts["verification"] = _incidents(
            dbsession, identity, Incident.status == constant(Status.verification.value))
    mine = (select(CorrectiveAction, Incident).join(Incident, Incident.id == CorrectiveAction.incident_id)
            .where(CorrectiveAction.assignee_id == identity.user_id, CorrectiveAction.status.in_(PENDING))
            .order_by(CorrectiveAction.due_date.is_(None), CorrectiveAction.due_date, CorrectiveAction.id))
    queues.actions = [(action, incident) for action, incident in dbsession.execute(mine).all()]
    queues.counts["actions"] = len(queues.actions)
    queues.counts["overdue"] = sum(1 for action, _ in queues.actions
                                   if action.due_date is not None and action.due_date < today)
    since = dt.datetime.now(dt.UTC) - RECENT
    queues.serious, queues.counts["serious"] = _incidents(
        dbsession, identity, Incident.severity.in_((Severity.high, Severity.critical)),
        or_(Incident.created_at >= since, Incident.occurred_at >= since))
    return queues


def waiting_count(identity: Identity, up_to: int | None = None) -> ColumnElement[int]:
    """The menu's count as one SQL expression (the menu reads its badges in
    one statement on every page): what `waiting_for` lists for this person
    (incidents whose next step is theirs, their open actions), counted
    without loading them. `up_to`: each part stops counting there (the menu
    says "99+": no need to read a long queue to the end). The person and
    organization are the bound parameters `me` and `organization`
    (ui.menu.badge_parameters):
    the expression is made once per role and bound."""
    return _waiting_count(role_at_least(identity.role, Role.supervisor),
                          role_at_least(identity.role, Role.safety_manager), up_to)


@functools.cache
def _waiting_count(supervisor: bool, safety_manager: bool, up_to: int | None) -> ColumnElement[int]:
    me = bindparam("me", type_=Integer)
    org = Incident.organization_id == bindparam("organization", type_=Integer)
    parts = []
    # One count per status group, each along the (organization, status,
    # number) index: OR-ed together they made PostgreSQL read every incident.
    # The statuses are constants of the statement's text, so PostgreSQL's
    # generic plan uses the partial index of investigations (db.constant).
    investigating = Incident.status == constant(Status.investigation.value)
    if supervisor:
        new = [constant(Status.reported.value), constant(Status.triage.value)]
        parts.append(count_up_to(select(Incident.id).where(org, Incident.status.in_(new)), up_to))
        # Without a lead, and led by this person: two ranges of the
        # (organization, lead) index, where an OR read every investigation.
        parts.append(count_up_to(select(Incident.id).where(
            org, investigating, Incident.investigation_lead_id.is_(None)), up_to))
        parts.append(count_up_to(select(Incident.id).where(
            org, investigating, Incident.investigation_lead_id == me), up_to))
    if safety_manager:
        parts.append(count_up_to(select(Incident.id).where(
            org, Incident.status == constant(Status.verification.value)), up_to))
    parts.append(open_actions_count(up_to))
    if len(parts) == 1:
        return parts[0]
    rest = parts[1]
    for part in parts[2:]:
        rest = rest + part
    if up_to is None:
        return parts[0] + rest
    # When the first part alone reaches `up_to`, the sum says "99+" whatever
    # the others hold: PostgreSQL counts them only otherwise (an uncorrelated
    # subquery is run when first needed, here only in the ELSE). OFFSET 0
    # keeps the first count in its subquery: pulled up, it would be copied
    # into both branches and counted twice.
    first = select(parts[0].label("n")).offset(constant(0)).subquery()
    return select(case((first.c.n >= constant(up_to), first.c.n), else_=first.c.n + rest)).scalar_subquery()


