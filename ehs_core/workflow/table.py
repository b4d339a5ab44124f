"""The incident workflow as data: every allowed move, who may make it, what
must be true first and what else it changes. This table alone drives the
transitions endpoint, the detail's `transitions` list and `blockedReason`."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum

from sqlalchemy import exists, select
from sqlalchemy.orm import Session

from ehs_core.actions.models import PENDING, ActionStatus, CorrectiveAction
from ehs_core.incidents.models import Incident, Severity, Status
from ehs_core.investigation.models import RootCause
from ehs_core.security import Role

Condition = Callable[[Session, Incident], str | None]


class Effect(StrEnum):
    set_closed_at = "set_closed_at"
    clear_closed_at = "clear_closed_at"


def low_or_medium(dbsession: Session, incident: Incident) -> str | None:
    if incident.severity in (Severity.low, Severity.medium):
        return None
    return "Only low or medium severity incidents can be closed from triage"


def has_root_cause(dbsession: Session, incident: Incident) -> str | None:
    found = dbsession.execute(select(exists().where(RootCause.incident_id == incident.id))).scalar()
    return None if found else "Record at least one root cause first"


def actions_ready_for_verification(dbsession: Session, incident: Incident) -> str | None:
    statuses = list(dbsession.execute(
        select(CorrectiveAction.status).where(CorrectiveAction.incident_id == incident.id)).scalars())
    if not statuses:
        return "Add at least one corrective action first"
    if any(status in PENDING for status in statuses):
        return "Every action must be done or cancelled first (some are open or in progress)"
    return None


def all_actions_verified(dbsession: Session, incident: Incident) -> str | None:
    unverified = dbsession.execute(select(exists().where(
        CorrectiveAction.incident_id == incident.id,
        CorrectiveAction.status.not_in((ActionStatus.verified, ActionStatus.cancelled))))).scalar()
    return "Every action that is not cancelled must be verified first" if unverified else None


@dataclass(frozen=True)
class Transition:
    source: Status
    target: Status
    minimum_role: Role
    condition: Condition | None = None
    effect: Effect | None = None


TRANSITIONS: tuple[Transition, ...] = (
    Transition(Status.reported, Status.triage, Role.supervisor),
    Transition(Status.triage, Status.investigation, Role.supervisor),
    Transition(Status.triage, Status.actions, Role.supervisor),
    Transition(Status.triage, Status.closed, Role.supervisor, low_or_medium, Effect.set_closed_at),
    Transition(Status.investigation, Status.actions, Role.supervisor, has_root_cause),
    Transition(Status.actions, Status.investigation, Role.supervisor),
    Transition(Status.actions, Status.verification, Role.supervisor, actions_ready_for_verification),
    Transition(Status.verification, Status.actions, Role.safety_manager),
    Transition(Status.verification, Status.closed, Role.safety_manager, all_actions_verified,
               Effect.set_closed_at),
    # Reopening.
    Transition(Status.closed, Status.investigation, Role.safety_manager, None, Effect.clear_closed_at),
)


def find(source: str, target: str) -> Transition | None:
    for transition in TRANSITIONS:
        if transition.source == source and transition.target == target:
            return transition
    return None


def leaving(source: str) -> list[Transition]:
    return [t for t in TRANSITIONS if t.source == source]
