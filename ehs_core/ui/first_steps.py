"""The first hour (issue #36 item 14): after setup, home shows an admin what
is left to make the service useful (add the sites, invite the people, and
what each enabled plugin needs, such as the establishments' details for the
injury records or a reporting-link poster), each step ticked as it is done,
until every one is.

Packages and plugins add steps with `config.add_first_step`; the card itself
is an ordinary home card (`add_dashboard_card`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pyramid.config import Configurator
from pyramid.request import Request

from ehs_core.directives import register_once
from ehs_core.security import Permission


@dataclass(frozen=True)
class FirstStep:
    name: str
    title: str
    route_name: str
    done: Callable[[Request], bool]
    order: int


def add_first_step(config: Configurator, name: str, title: str, route_name: str,
                   done: Callable[[Request], bool] | str, *, order: int = 100) -> None:
    """Directive: a step of the first hour; `done(request)` says whether it
    is behind the organization; the card links to `route_name`."""
    step = FirstStep(name, title, route_name, config.maybe_dotted(done), order)

    def register() -> None:
        steps = config.registry.setdefault("ui.first_steps", [])
        steps.append(step)
        steps.sort(key=lambda item: (item.order, item.name))

    register_once(config, "ehs.first_step", name, register)


def first_steps_card(request: Request) -> dict[str, Any] | None:
    """The steps with whether each is done; no card once all are."""
    steps = [(step, bool(step.done(request))) for step in request.registry.get("ui.first_steps", ())]
    if all(done for _, done in steps):
        return None
    return {"steps": [{"title": step.title, "url": request.route_path(step.route_name), "done": done}
                      for step, done in steps],
            "left": sum(1 for _, done in steps if not done)}


def includeme(config: Configurator) -> None:
    config.add_directive("add_first_step", add_first_step)
    config.add_dashboard_card("first_steps", "ehs_core:templates/ui/first_steps.html", first_steps_card,
                              permission=Permission.manage_users, order=1)
