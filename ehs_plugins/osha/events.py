"""The OSHA plugin's own event, published like the core's (ehs_core.events)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

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
    classification was recalculated. The severe-injury notice listens."""

    after = AfterCaseChanged
    case: InjuryCase
    incident: Incident
    change: str
    actor_id: int | None
