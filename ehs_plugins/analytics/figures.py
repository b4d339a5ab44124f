"""The `add_injury_figures` directive: how the analytics plugin gets
recordable-case counts and injury rates without knowing where they come
from. The OSHA plugin registers its cases and hours against it when both
plugins are enabled; with no provider the analytics answer has neither
`recordableCases`/`daysAway` nor `rates`.

The provider hands over its recordable cases as a query (which the
analytics plugin counts per period and keeps in its tallies, see
`tallies`), the events after which an incident's cases must be counted
again, and the rates, for which the analytics plugin counts the cases of
each window of months."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pyramid.config import Configurator
from pyramid.registry import Registry
from pyramid.request import Request
from sqlalchemy import Select

from ehs_core.directives import register_once

KEY = "ehs.analytics.injury_figures"


Month = tuple[int, int]  # (year, month)
# Windows of whole months (first, last), inclusive, in each site's zone ->
# (recordable cases, DART cases, lost-time cases) of each window.
CaseCounts = Callable[[list[tuple[Month, Month]]], list[tuple[int, int, int]]]


@dataclass(frozen=True)
class InjuryFigures:
    """`cases()`: a query of every recordable case, one row each, with the
    columns `incident_id`, `days_away` (int), `dart` (a days-away or
    restricted case) and `lost_time` (a days-away case).
    `rates(request, last, site_id, *, with_counts, case_counts)`: the
    `rates` section (TRIR and DART) up to the day `last`, for one site or all
    of the organization's; the case counts behind the rates only
    `with_counts`; `case_counts(windows)` (see CaseCounts) counts the
    organization's cases (of `site_id`) in whole months of their site's
    calendar.
    `changed_by`: the event classes published when an incident's cases
    change (each with the `incident`).
    `body_parts()` (optional): a query of every injured or ill person's case,
    one row each, with the columns `incident_id` and `code` (the part of the
    body affected as a code, NULL when not coded yet); `body_part_titles(request)`
    names the codes in the caller's language, in the order they are listed
    (issue #39 item 5: analytics count injuries by body part)."""

    cases: Callable[[], Select]
    rates: Callable[..., dict[str, Any]]
    changed_by: tuple[type, ...] = ()
    body_parts: Callable[[], Select] | None = None
    body_part_titles: Callable[[Request], dict[str, str]] | None = None


def add_injury_figures(config: Configurator, *, cases: Callable[[], Select],
                       rates: Callable[..., dict[str, Any]], changed_by: tuple[type, ...] = (),
                       body_parts: Callable[[], Select] | None = None,
                       body_part_titles: Callable[[Request], dict[str, str]] | None = None) -> None:
    """Directive: the one provider of injury figures (see InjuryFigures; a
    second provider conflicts at start-up)."""
    figures = InjuryFigures(config.maybe_dotted(cases), config.maybe_dotted(rates), tuple(changed_by),
                            config.maybe_dotted(body_parts), config.maybe_dotted(body_part_titles))

    def register() -> None:
        config.registry[KEY] = figures

    register_once(config, "analytics.injury_figures", "provider", register)


def injury_figures(registry: Registry) -> InjuryFigures | None:
    return registry.get(KEY)


def includeme(config: Configurator) -> None:
    config.add_directive("add_injury_figures", add_injury_figures)
