"""A tiny plugin that adds screens through the directives, as a third party
would: a menu entry for supervisors, a panel on the incident page, a home
card and a page of its own."""

from __future__ import annotations

from pyramid.config import Configurator
from pyramid.request import Request
from sqlalchemy import bindparam, func, select

from ehs_core.incidents.models import Incident
from ehs_core.security import Permission

# The menu's badge: the incidents this person reported, as an expression
# made once, naming the person as the bound parameter the menu passes.
REPORTED_BY_ME = select(func.count()).where(Incident.reporter_id == bindparam("me")).scalar_subquery()
# A badge whose SQL SQLAlchemy writes as it runs (an IN of a list of values).
SERIOUS = select(func.count()).where(Incident.organization_id == bindparam("organization"),
                                     Incident.severity.in_(["high", "critical"])).scalar_subquery()


def weather_page(request: Request) -> dict:
    return {"forecast": "Dry all week"}


def panel(request: Request, context: object) -> dict:
    return {"number": context.incident.number}


def card(request: Request) -> dict | None:
    return {"count": 3}


def includeme(config: Configurator) -> None:
    config.add_route("weather", "/weather")
    config.add_view(weather_page, route_name="weather", renderer="tests.core.ui:templates/weather.html",
                    permission=Permission.view_all_actions)
    config.add_nav_item("weather", "Weather", "weather", permission=Permission.view_all_actions, order=50,
                        badge=lambda request: REPORTED_BY_ME)
    config.add_nav_item("alerts", "Alerts", "weather", permission=Permission.view_all_actions, order=60,
                        badge=lambda request: SERIOUS)
    config.add_incident_panel("weather", "tests.core.ui:templates/panel.html", panel,
                              permission="update_incident")
    config.add_dashboard_card("weather", "tests.core.ui:templates/card.html", card,
                              permission=Permission.view_all_actions)
