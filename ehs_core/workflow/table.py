"""The incident workflow as data: every allowed move, who may make it, what
must be true first and what else it changes. This table alone drives the
transitions endpoint, the detail's `transitions` list and `blockedReason`."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from sqlalchemy import ColumnElement, case, exists, select
from sqlalchemy.orm import Session

from ehs_core.actions.models import PENDING, ActionStatus, CorrectiveAction
from ehs_core.db import constant
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


@dataclass(frozen=True)
class Fact:
    """A condition on what hangs off the incident: `column()`, an SQL
    expression correlated to `Incident` (built once), and `reason(value)`,
    why the move must wait given its value (None: it need not). Called as a
    `Condition`, it reads the value on its own (the move itself, in its
    transaction); the detail reads it with the incident instead
    (`workflow.fact_column`), the same rule in the same statement."""

    column: Callable[[], ColumnElement[Any]]
    reason: Callable[[Any], str | None]

    def __call__(self, dbsession: Session, incident: Incident) -> str | None:
        value = dbsession.execute(select(self.column()).where(Incident.id == incident.id)).scalar()
        return self.reason(value)


def _statuses(*statuses: str) -> list[ColumnElement[Any]]:
    # Written into the statement (`constant`): no expanding parameter, which
    # a statement kept and run on the cursor cannot send.
    return [constant(status) for status in statuses]


def _causes() -> ColumnElement[bool]:
    return exists().where(RootCause.incident_id == Incident.id)


def _actions_state() -> ColumnElement[int]:
    """0: no action; 1: some still open or in progress; 2: all done or cancelled."""
    of_incident = CorrectiveAction.incident_id == Incident.id
    return case((~exists().where(of_incident), constant(0)),
                (exists().where(of_incident, CorrectiveAction.status.in_(_statuses(*PENDING))), constant(1)),
                else_=constant(2))


def _unverified() -> ColumnElement[bool]:
    return exists().where(CorrectiveAction.incident_id == Incident.id, CorrectiveAction.status.not_in(
        _statuses(ActionStatus.verified, ActionStatus.cancelled)))


has_root_cause = Fact(_causes, lambda found: None if found else "Record at least one root cause first")
actions_ready_for_verification = Fact(_actions_state, lambda state: {
    0: "Add at least one corrective action first",
    1: "Every action must be done or cancelled first (some are open or in progress)"}.get(state))
all_actions_verified = Fact(_unverified, lambda unverified: (
    "Every action that is not cancelled must be verified first" if unverified else None))


@dataclass(frozen=True)
class Transition:
    source: Status
    target: Status
    minimum_role: Role
    condition: Condition | Fact | None = None
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
