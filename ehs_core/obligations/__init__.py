"""What is owed to regulators, in one queue.

Every regime a safety team answers to has the same shape: facts on an
incident, a clock from an event, a reminder, a record of when it was done
(29 CFR 1904.39's 8- and 24-hour reports, 1904.35(b)(2)'s copies of records,
Title 8 CCR §342(a)'s 8-hour report in California ...). A plugin declares each
kind once with `config.add_obligation_kind`; its code opens obligations with
`ehs_core.obligations.services.open_obligation` and the core keeps the rest:
the list (`GET /api/obligations`), marking one done or waived, the home
queue "Owed to regulators", the reminder before the due time and the alert
once it is overdue (`notices`).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from pyramid.config import Configurator
from pyramid.registry import Registry

from ehs_core.directives import register_once
from ehs_core.security import ROLE_ORDER, Role, role_at_least

KINDS = "obligation_kinds"


@dataclass(frozen=True)
class ObligationKind:
    """A kind of obligation: `title` as people call it ("Cal/OSHA 8-hour
    serious injury report"), the least role that handles it (sees it, marks
    it done), the words saying how it is fulfilled ("By phone to the
    nearest district office"), and how long before the due time the
    reminder goes out (None: when three quarters of its time have passed)."""

    name: str
    title: str
    handled_by: Role
    fulfilled_by: str
    remind_before: dt.timedelta | None = None


def add_obligation_kind(config: Configurator, name: str, *, title: str,
                        handled_by: str = Role.safety_manager, fulfilled_by: str = "",
                        remind_before: dt.timedelta | None = None) -> None:
    """Directive: declare a kind of obligation; two claims of one name stop
    start-up with a conflict (a discriminator, `register_once`)."""
    kind = ObligationKind(name, title, Role(handled_by), fulfilled_by, remind_before)

    def register() -> None:
        config.registry.setdefault(KINDS, {})[name] = kind

    register_once(config, "ehs.obligation_kind", name, register)


def kinds(registry: Registry) -> dict[str, ObligationKind]:
    """The kinds the enabled packages declared (a disabled plugin's are not
    here, and neither are its obligations anywhere)."""
    return registry.get(KINDS, {})


def kinds_for(registry: Registry, role: str | None) -> list[str]:
    """The names of the kinds a person of `role` handles."""
    if role is None:
        return []
    return sorted(name for name, kind in kinds(registry).items() if role_at_least(role, kind.handled_by))


def waiver_role(kind: ObligationKind) -> Role:
    """Waiving a report owed to a regulator is a safety manager's decision
    at least (or the kind's own role, when higher)."""
    return max(kind.handled_by, Role.safety_manager, key=ROLE_ORDER.index)


def includeme(config: Configurator) -> None:
    from huey import crontab

    from ehs_core.obligations.notices import NOTICE_JOB, send_notices

    config.add_directive("add_obligation_kind", add_obligation_kind)
    config.add_route("obligations", "/api/obligations")
    config.add_route("obligation.done", r"/api/obligations/{id:\d{1,9}}/done")
    config.add_route("obligation.waive", r"/api/obligations/{id:\d{1,9}}/waive")
    config.add_mail_template("obligation_reminder", "ehs_core.mail:templates/obligation_reminder.txt")
    config.add_mail_template("obligation_overdue", "ehs_core.mail:templates/obligation_overdue.txt")
    # Clocks of 8 hours need the minute: the job reads one index range.
    config.add_periodic_job(NOTICE_JOB, send_notices, crontab(minute="*"))
    config.scan(".views")
    config.include(".pages")
