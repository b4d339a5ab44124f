"""Events the core publishes and plugins listen to (Kinto's pattern).

`publish(request, event)` notifies listeners at once, inside the request's
transaction (a listener may veto by raising), and schedules the event's
`After…` twin for after a successful commit, which is where side effects
such as mail belong: a rolled-back request must not send anything.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pyramid.request import Request


class Event:
    """Base of in-transaction events."""

    after: type[AfterCommit] | None = None

    def __init__(self, request: Request, **data: Any) -> None:
        self.request = request
        self.__dict__.update(data)


class AfterCommit:
    """Base of after-commit twins; carries the original event's data."""

    def __init__(self, event: Event) -> None:
        self.event = event
        self.request = event.request
        for key, value in event.__dict__.items():
            if key != "request":
                setattr(self, key, value)


def after_commit(request: Request, callback: Callable[[], None]) -> None:
    """Run `callback` once the request's transaction has committed."""

    def hook(committed: bool) -> None:
        if committed:
            callback()

    request.tm.get().addAfterCommitHook(hook)


def publish(request: Request, event: Event) -> None:
    request.registry.notify(event)
    if event.after is not None:
        twin = event.after(event)
        after_commit(request, lambda: request.registry.notify(twin))


class AfterUserCreated(AfterCommit):
    """After-commit twin of UserCreated."""


class UserCreated(Event):
    """A user was created (attributes: user, invited)."""

    after = AfterUserCreated


class AfterUserUpdated(AfterCommit):
    """After-commit twin of UserUpdated."""


class UserUpdated(Event):
    """A user was changed (attributes: user, changes)."""

    after = AfterUserUpdated


class AfterIncidentCreated(AfterCommit):
    """After-commit twin of IncidentCreated."""


class IncidentCreated(Event):
    """A report was filed (attributes: incident)."""

    after = AfterIncidentCreated


class AfterIncidentUpdated(AfterCommit):
    """After-commit twin of IncidentUpdated."""


class IncidentUpdated(Event):
    """Incident fields changed (attributes: incident, changes)."""

    after = AfterIncidentUpdated


class AfterIncidentTransitioned(AfterCommit):
    """After-commit twin of IncidentTransitioned."""


class IncidentTransitioned(Event):
    """The workflow moved (attributes: incident, source, target, note)."""

    after = AfterIncidentTransitioned


class AfterActionCreated(AfterCommit):
    """After-commit twin of ActionCreated."""


class ActionCreated(Event):
    """A corrective action was added (attributes: incident, action)."""

    after = AfterActionCreated


class AfterActionUpdated(AfterCommit):
    """After-commit twin of ActionUpdated."""


class ActionUpdated(Event):
    """A corrective action changed (attributes: incident, action, changes)."""

    after = AfterActionUpdated
