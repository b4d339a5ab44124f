"""Events the core publishes and plugins listen to (Kinto's `events.py`).

Every event is a dataclass with explicit fields. `publish(request, event)`
notifies listeners at once, inside the request's transaction: a listener may
veto the operation by raising (the whole request rolls back, and a
`DomainError` it raises is answered like the operation's own refusals). Once
the transaction has committed, the event's `After…` twin is published; a
rolled-back request publishes no twin. The twin has the original `event` and
reads its fields through it (`twin.incident is twin.event.incident`).

The audit trail is written by listeners on these events
(`ehs_core.audit.listeners`, as Kinto's history plugin does), so each event
carries `actor_id`, the user to record: None where nobody may be recorded (an
anonymous report, a kiosk link), which is how the anonymous-actor rule
travels from the operation that knows it to the trail.

Mail: listeners render mail in the transaction (it names rows they read) and
`ehs_core.mail.send_mail` queues delivery after commit, so a rolled-back
request sends nothing. The After… twins are for work that needs nothing more
from the database (a job with ids, a cache to drop).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

from pyramid.request import Request

if TYPE_CHECKING:
    from ehs_core.actions.models import CorrectiveAction
    from ehs_core.attachments.models import Attachment
    from ehs_core.incidents.models import Comment, Incident
    from ehs_core.investigation.models import Investigation, RootCause
    from ehs_core.people.models import IncidentPerson
    from ehs_core.sites.models import Site
    from ehs_core.users.models import Organization, User


def actor(request: Request) -> int | None:
    """The signed-in caller's user id, or None (a token identity, nobody)."""
    identity = request.identity
    return identity.user_id if identity is not None else None


@dataclass(eq=False)
class Event:
    """Base of in-transaction events."""

    after: ClassVar[type[AfterCommit] | None] = None
    request: Request = field(repr=False)


@dataclass(eq=False)
class AfterCommit:
    """Base of after-commit twins: the committed `event`, whose fields it reads."""

    event: Event

    @property
    def request(self) -> Request:
        return self.event.request

    def __getattr__(self, name: str) -> Any:
        # Dunder names are the twin's own: zope.interface looks up
        # `__providedBy__` to pick listeners, and forwarding it would hand
        # the twin to the original event's (in-transaction) listeners.
        if name == "event" or name.startswith("__"):
            raise AttributeError(name)
        return getattr(self.event, name)


def _at_the_end(request: Request, callback: Callable[[], None]) -> None:
    """A safe request on PostgreSQL runs without a transaction (its
    statements commit as they run, `ehs_core.db.reads_in_autocommit`): its
    commit hooks run when it ends, unless it failed."""

    def finished(request: Request) -> None:
        if request.exception is None:
            callback()

    request.add_finished_callback(finished)


def after_commit(request: Request, callback: Callable[[], None]) -> None:
    """Run `callback` once the request's transaction has committed."""
    # Safe requests read outside pyramid_tm (no transaction to commit): their
    # callbacks run when the request ends. An object without a WSGI environ
    # (a job's or a script's request) has its transaction manager.
    environ = getattr(request, "environ", None)
    if environ is not None and not environ.get("tm.active"):
        _at_the_end(request, callback)
        return

    def hook(committed: bool) -> None:
        if committed:
            callback()

    request.tm.get().addAfterCommitHook(hook)


def before_commit(request: Request, callback: Callable[[], None]) -> None:
    """Run `callback` at the end of the request's transaction, just before it
    commits, for listeners that need what the operation completes last.
    Whatever it queues with `after_commit` still runs only if the commit
    succeeds."""
    # Safe requests read outside pyramid_tm (no transaction to commit): their
    # callbacks run when the request ends. An object without a WSGI environ
    # (a job's or a script's request) has its transaction manager.
    environ = getattr(request, "environ", None)
    if environ is not None and not environ.get("tm.active"):
        _at_the_end(request, callback)
        return
    request.tm.get().addBeforeCommitHook(callback)


def publish(request: Request, event: Event) -> None:
    request.registry.notify(event)
    if event.after is not None:
        twin = event.after(event)
        after_commit(request, lambda: request.registry.notify(twin))


# --- the organization and its users -------------------------------------------------


class AfterOrganizationCreated(AfterCommit):
    """After-commit twin of OrganizationCreated."""


@dataclass(eq=False)
class OrganizationCreated(Event):
    """Setup created the organization (auth's `POST /api/setup`, before its
    first admin exists: `actor_id` is None). The incidents package starts
    the organization's numbering here."""

    after = AfterOrganizationCreated
    organization: Organization
    actor_id: int | None


# --- users ------------------------------------------------------------------


class AfterUserCreated(AfterCommit):
    """After-commit twin of UserCreated."""


@dataclass(eq=False)
class UserCreated(Event):
    """An admin added a user (users.services.create_user). `invited`: no
    password was set, so the user must be sent an invitation (auth does)."""

    after = AfterUserCreated
    user: User
    invited: bool
    actor_id: int | None


class AfterUserUpdated(AfterCommit):
    """After-commit twin of UserUpdated."""


@dataclass(eq=False)
class UserUpdated(Event):
    """An admin changed a user (users.services.update_user). `changes`:
    {field: [old, new]} for name, role and active, and `password: True` when
    a new password was set (auth then ends the user's sessions, as it does on
    deactivation)."""

    after = AfterUserUpdated
    user: User
    changes: dict[str, Any]
    actor_id: int | None


# --- sites ------------------------------------------------------------------


class AfterSiteUpdated(AfterCommit):
    """After-commit twin of SiteUpdated."""


@dataclass(eq=False)
class SiteUpdated(Event):
    """An admin changed a site (sites.services.update_site); only fired when
    something did change. `changes`: {field: {old, new}} by JSON name. A
    change of `timezone` moves the local day and hour of every incident of
    the site (figures kept per local month listen for it)."""

    after = AfterSiteUpdated
    site: Site
    changes: dict[str, Any]
    actor_id: int | None


# --- incidents ----------------------------------------------------------------


class AfterIncidentCreated(AfterCommit):
    """After-commit twin of IncidentCreated; the incident has its number."""


@dataclass(eq=False)
class IncidentCreated(Event):
    """A report was stored (incidents.filing.file_incident, through the API
    and through a kiosk link alike). Fired when the row exists and has its
    number, in the filing transaction (see incidents.numbering). `changes`:
    the filed fields as {field: {old: None, new}}."""

    after = AfterIncidentCreated
    incident: Incident
    changes: dict[str, Any]
    actor_id: int | None


class AfterIncidentUpdated(AfterCommit):
    """After-commit twin of IncidentUpdated."""


@dataclass(eq=False)
class IncidentUpdated(Event):
    """Fields of a report changed (incidents.filing.update_incident); only
    fired when something did change. `changes`: {field: {old, new}}."""

    after = AfterIncidentUpdated
    incident: Incident
    changes: dict[str, Any]
    actor_id: int | None


class AfterIncidentTransitioned(AfterCommit):
    """After-commit twin of IncidentTransitioned."""


@dataclass(eq=False)
class IncidentTransitioned(Event):
    """The workflow moved (workflow.transitions.move_incident). `changes`:
    status, closedAt when it changed, and the note."""

    after = AfterIncidentTransitioned
    incident: Incident
    source: str
    target: str
    note: str | None
    changes: dict[str, Any]
    actor_id: int | None


class AfterCommentCreated(AfterCommit):
    """After-commit twin of CommentCreated."""


@dataclass(eq=False)
class CommentCreated(Event):
    """Someone commented on a report (incidents.comments.add_comment; a
    transition's note travels in IncidentTransitioned instead)."""

    after = AfterCommentCreated
    incident: Incident
    comment: Comment
    actor_id: int | None


# --- what hangs off an incident ----------------------------------------------------


class AfterInvestigationUpdated(AfterCommit):
    """After-commit twin of InvestigationUpdated."""


@dataclass(eq=False)
class InvestigationUpdated(Event):
    """The investigation was started (`created`) or changed
    (investigation.services.put_investigation); not fired for a change that
    changes nothing."""

    after = AfterInvestigationUpdated
    incident_id: int
    investigation: Investigation
    created: bool
    changes: dict[str, Any]
    actor_id: int | None


class AfterRootCauseChanged(AfterCommit):
    """After-commit twin of RootCauseChanged."""


@dataclass(eq=False)
class RootCauseChanged(Event):
    """A root cause was added, changed or removed (`change`: "created",
    "updated" or "deleted"; investigation.services)."""

    after = AfterRootCauseChanged
    incident_id: int
    root_cause: RootCause
    change: str
    changes: dict[str, Any]
    actor_id: int | None


class AfterPersonChanged(AfterCommit):
    """After-commit twin of PersonChanged."""


@dataclass(eq=False)
class PersonChanged(Event):
    """Someone involved in an incident was added, changed or removed
    (`change`: "created", "updated" or "deleted"; people.services). A
    listener may veto: the OSHA plugin refuses to remove an injured person
    whose injury case names them."""

    after = AfterPersonChanged
    incident_id: int
    person: IncidentPerson
    change: str
    changes: dict[str, Any]
    actor_id: int | None


class AfterActionCreated(AfterCommit):
    """After-commit twin of ActionCreated."""


@dataclass(eq=False)
class ActionCreated(Event):
    """A corrective action was added (actions.services.create_action)."""

    after = AfterActionCreated
    incident: Incident
    action: CorrectiveAction
    changes: dict[str, Any]
    actor_id: int | None


class AfterActionUpdated(AfterCommit):
    """After-commit twin of ActionUpdated."""


@dataclass(eq=False)
class ActionUpdated(Event):
    """A corrective action changed (actions.services.update_action); only fired
    when something did change."""

    after = AfterActionUpdated
    incident: Incident
    action: CorrectiveAction
    changes: dict[str, Any]
    actor_id: int | None


class AfterAttachmentAdded(AfterCommit):
    """After-commit twin of AttachmentAdded (the file is in place for good)."""


@dataclass(eq=False)
class AttachmentAdded(Event):
    """A file was kept (attachments.storage.save_upload, from the API and a
    kiosk link alike)."""

    after = AfterAttachmentAdded
    incident_id: int
    attachment: Attachment
    actor_id: int | None


class AfterAttachmentRemoved(AfterCommit):
    """After-commit twin of AttachmentRemoved (the file is gone from disk)."""


@dataclass(eq=False)
class AttachmentRemoved(Event):
    """A file was deleted (attachments.storage.remove_attachment)."""

    after = AfterAttachmentRemoved
    incident_id: int
    attachment: Attachment
    actor_id: int | None
