"""Moving incidents through the workflow table, the `add_transition_guard`
directive through which plugins can add conditions, and
`add_transition_warning`, through which they say what a person should
know before a move the workflow allows."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from pyramid.config import Configurator
from pyramid.request import Request
from sqlalchemy import ColumnElement, case

from ehs_core.db import constant
from ehs_core.directives import register_once
from ehs_core.incidents.models import Incident
from ehs_core.incidents.resources import known_context
from ehs_core.security import role_at_least
from ehs_core.workflow.table import TRANSITIONS, Fact, Transition, leaving

Guard = Callable[[Request, Incident, Transition], str | None]


def add_transition_guard(config: Configurator, name: str, guard: Guard) -> None:
    """Directive: an extra condition on transitions; the guard returns a
    reason when the move must wait, else None."""
    guard = config.maybe_dotted(guard)

    def register() -> None:
        config.registry.setdefault("transition_guards", []).append(guard)

    register_once(config, "ehs.transition_guard", name, register)


# warning(request, incident, target status) -> words shown beside the move, or None.
Warning = Callable[[Request, Incident, str], str | None]


def add_transition_warning(config: Configurator, name: str, warning: Warning) -> None:
    """Directive: something a person should know before making a move the
    workflow allows, shown on the incident page's Next step beside the
    move's button (the move itself stays as the spec fixes it: a warning
    never refuses). `warning(request, incident, target)` is asked for each
    move the caller may make now; it gives the words, in the reader's
    language, or None. The OSHA plugin's asks for a note when an injury
    with no injury case is closed (issue #36 item 11)."""
    warning = config.maybe_dotted(warning)

    def register() -> None:
        config.registry.setdefault("transition_warnings", []).append(warning)

    register_once(config, "ehs.transition_warning", name, register)


def transition_warnings(request: Request, incident: Incident, targets: list[str]) -> list[str]:
    """The registered warnings about the moves to `targets` (each once)."""
    found: list[str] = []
    for warning in request.registry.get("transition_warnings", ()):
        for target in targets:
            words = warning(request, incident, target)
            if words and words not in found:
                found.append(words)
    return found


def fact_name(transition: Transition) -> str:
    return f"workflow.{transition.source.value}.{transition.target.value}"


def fact_column(transition: Transition, fact: Fact) -> Callable[[], ColumnElement[Any]]:
    """The transition's `fact` as a column of the detail's statement, worked
    out only when the incident is where the move leaves from (PostgreSQL
    then evaluates one of the table's facts at most)."""
    leaves = constant(transition.source.value)
    return functools.cache(lambda: case((Incident.status == leaves, fact.column())))


def blocked_reason(request: Request, incident: Any, transition: Transition) -> str | None:
    condition = transition.condition
    if condition is not None:
        # The detail read its facts with the incident (`read_with_detail`).
        context = known_context(request, incident)
        name = fact_name(transition)
        read = context.page.read if context is not None and context.page is not None else {}
        if isinstance(condition, Fact) and name in read:
            reason = condition.reason(read[name])
        else:
            reason = condition(request.dbsession, incident)
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
    config.add_directive("add_transition_warning", add_transition_warning)
    config.add_request_method("ehs_core.workflow.sections.workflow_moves", "workflow_moves", reify=True)
    # The detail's `transitions` and `can`, as sections like any other part.
    config.add_incident_section("transitions", transitions_section, detail_only=True)
    config.add_incident_section("can", can_section, detail_only=True)
    # What the moves' conditions read, read with the detail's incident:
    # `transitions` and `can` then cost no statement of their own.
    for transition in TRANSITIONS:
        fact = transition.condition
        if isinstance(fact, Fact):
            config.read_with_detail(fact_name(transition), fact_column(transition, fact))
    config.add_route("incident.transitions", r"/api/incidents/{number:\d{1,9}}/transitions",
                     factory="ehs_core.incidents.resources.incident_factory")
    config.scan(".views")
    # Follow-up mail as the workflow moves (issue #36 item 10).
    for template in ("report_closed", "report_reopened", "lead_named", "actions_done"):
        config.add_mail_template(template, f"ehs_core.mail:templates/{template}.txt")
    config.scan(".followup")
