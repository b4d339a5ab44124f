"""The OSHA plugin's own event, published like the core's (ehs_core.events)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ehs_core.events import AfterCommit, Event

if TYPE_CHECKING:
    from ehs_core.incidents.models import Incident
    from ehs_plugins.osha.models import InjuryCase


class AfterCaseChanged(AfterCommit):
    """After-commit twin of CaseChanged."""


@dataclass(eq=False)
class CaseChanged(Event):
    """An injury or illness case was added, changed or removed (`change`:
    "created", "updated" or "deleted"; osha.services), after its
    classification was recalculated. `before`: the decision before the
    change (see trail.decision; None for a new case). The decision trail
    and the severe-injury notice listen."""

    after = AfterCaseChanged
    case: InjuryCase
    incident: Incident
    change: str
    before: dict[str, Any] | None
    actor_id: int | None
