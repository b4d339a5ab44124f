"""The follow-up's own event, published like the core's (`ehs_core.events`):
the audit trail records each message (who wrote it for the team, nobody for
the reporter) and the team hears of a reporter's answer by mail."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ehs_core.events import AfterCommit, Event

if TYPE_CHECKING:
    from ehs_core.followup.models import FollowUpMessage
    from ehs_core.incidents.models import Incident


class AfterFollowUpMessageAdded(AfterCommit):
    """After-commit twin of FollowUpMessageAdded."""


@dataclass(eq=False)
class FollowUpMessageAdded(Event):
    """A message of a report's follow-up thread: `message.direction` says
    whether the team wrote to the reporter or the reporter answered.
    `actor_id` is the team member, or None for the reporter (recorded
    nowhere)."""

    after = AfterFollowUpMessageAdded
    incident: Incident
    message: FollowUpMessage
    actor_id: int | None
