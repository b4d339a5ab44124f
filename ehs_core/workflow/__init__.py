"""Moving incidents through the workflow table, and the
`add_transition_guard` directive through which plugins can add conditions."""

from __future__ import annotations

from collections.abc import Callable

from pyramid.config import Configurator
from pyramid.request import Request

from ehs_core.directives import register_once
from ehs_core.incidents.models import Incident
from ehs_core.security import role_at_least
from ehs_core.workflow.table import Transition, leaving

Guard = Callable[[Request, Incident, Transition], str | None]


def add_transition_guard(config: Configurator, name: str, guard: Guard) -> None:
    """Directive: an extra condition on transitions; the guard returns a
    reason when the move must wait, else None."""
    guard = config.maybe_dotted(guard)

    def register() -> None:
        config.registry.setdefault("transition_guards", []).append(guard)

    register_once(config, "ehs.transition_guard", name, register)


def blocked_reason(request: Request, incident: Incident, transition: Transition) -> str | None:
    if transition.condition is not None:
        reason = transition.condition(request.dbsession, incident)
        if reason:
            return reason
    for guard in request.registry.get("transition_guards", []):
        reason = guard(request, incident, transition)
        if reason:
            return reason
    return None


def may_make(request: Request, transition: Transition) -> bool:
    identity = request.identity
    return bool(identity and identity.is_user and role_at_least(identity.role, transition.minimum_role))


def transitions_for(request: Request, incident: Incident) -> list[dict[str, str | None]]:
    """The moves the caller may make from here, each with `blockedReason`
    when its condition is not met yet."""
    return [{"to": t.target.value, "blockedReason": blocked_reason(request, incident, t)}
            for t in leaving(incident.status) if may_make(request, t)]


def includeme(config: Configurator) -> None:
    from ehs_core.workflow.sections import can_section, transitions_section

    config.add_directive("add_transition_guard", add_transition_guard)
    # The detail's `transitions` and `can`, as sections like any other part.
    config.add_incident_section("transitions", transitions_section, detail_only=True)
    config.add_incident_section("can", can_section, detail_only=True)
    config.add_route("incident.transitions", r"/api/incidents/{number:\d{1,9}}/transitions",
                     factory="ehs_core.incidents.resources.incident_factory")
    config.scan(".views")
