"""The home page: what needs this person now, and the cards plugins add."""

from __future__ import annotations

from typing import Any

from pyramid.config import Configurator
from pyramid.request import Request
from sqlalchemy.sql.elements import ColumnElement

from ehs_core.actions import today
from ehs_core.incidents.queues import waiting_count, waiting_for
from ehs_core.security import Permission
from ehs_core.ui.directives import rendered_slots
from ehs_core.ui.menu import BADGE_LIMIT


def home(request: Request) -> dict[str, Any]:
    identity = request.identity
    queues = waiting_for(request.dbsession, identity, today(request.registry))
    return {"queues": queues, "today": today(request.registry),
            "cards": rendered_slots(request, "ui.dashboard_cards")}


def home_badge(request: Request) -> int | ColumnElement[int] | None:
    """What waits for the person: a count the menu reads with its other badges."""
    return waiting_count(request.identity, up_to=BADGE_LIMIT + 1)


def includeme(config: Configurator) -> None:
    config.add_route("home", "/")
    config.add_view(home, route_name="home", renderer="ehs_core:templates/ui/home.html",
                    permission=Permission.signed_in)
    config.add_nav_item("home", "Home", "home", permission=Permission.signed_in, order=10,
                        badge=home_badge)
