"""The obligations' own event, published like the core's (`ehs_core.events`):
a plugin whose records say whether a report was made (the OSHA case's
`reportedToOshaAt`) keeps them in step with the queue."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ehs_core.events import AfterCommit, Event

if TYPE_CHECKING:
    from ehs_core.obligations.models import Obligation


class AfterObligationClosed(AfterCommit):
    """After-commit twin of ObligationClosed."""


@dataclass(eq=False)
class ObligationClosed(Event):
    """Someone marked an obligation done or waived it in the queue (the API
    or /obligations): `obligation.status`, `done_at`, `note` say how."""

    after = AfterObligationClosed
    obligation: Obligation
    actor_id: int | None
