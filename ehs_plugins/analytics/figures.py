"""The `add_injury_figures` directive: how the analytics plugin gets
recordable-case counts and injury rates without knowing where they come
from. The OSHA plugin registers its cases and hours against it when both
plugins are enabled; with no provider the analytics answer has neither
`recordableCases`/`daysAway` nor `rates`."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pyramid.config import Configurator
from pyramid.registry import Registry
from pyramid.request import Request
from sqlalchemy import Select

from ehs_core.directives import register_once

KEY = "analytics.injury_figures"


@dataclass(frozen=True)
class InjuryFigures:
    """`period(request, scope)`: (recordable cases, days away) of the incidents
    `scope(stmt)` narrows a statement reading `Incident` to (the caller's
    visible incidents of the period, in the same pass).
    `rates(request, last, site_id, *, with_counts, local_seconds)`: the
    `rates` section (TRIR and DART) up to the day `last`, for one site or all
    of the organization's; the case counts behind the rates only
    `with_counts`; `local_seconds(start, end)` is the incident's local
    wall-clock time at its site (seconds since 1970) for incidents between
    two instants, so cases fall in their site's calendar months."""

    period: Callable[[Request, Callable[[Select], Select]], tuple[int, int]]
    rates: Callable[..., dict[str, Any]]


def add_injury_figures(config: Configurator, *, period: Callable[..., tuple[int, int]],
                       rates: Callable[..., dict[str, Any]]) -> None:
    """Directive: the one provider of injury figures (see InjuryFigures; a
    second provider conflicts at start-up)."""
    figures = InjuryFigures(config.maybe_dotted(period), config.maybe_dotted(rates))

    def register() -> None:
        config.registry[KEY] = figures

    register_once(config, "analytics.injury_figures", "provider", register)


def injury_figures(registry: Registry) -> InjuryFigures | None:
    return registry.get(KEY)


def includeme(config: Configurator) -> None:
    config.add_directive("add_injury_figures", add_injury_figures)
