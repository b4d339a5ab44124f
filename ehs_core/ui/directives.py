"""Directives through which the core and plugins add screens: panels on
the incident page, cards on the home page and tools above the incident
list (menu entries: `ui.menu`). Each is ordered, shown only to callers who
hold its permission, and claimed once by name like every other directive;
a disabled plugin never calls them, so it adds nothing."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pyramid.config import Configurator
from pyramid.request import Request
from sqlalchemy.sql.elements import ColumnElement

from ehs_core.directives import register_once
from ehs_core.security import Root

# provider(request, ...) -> the template's variables, or None to show nothing.
Provider = Callable[..., dict[str, Any] | None]
# read() -> a column correlated to the incident, read with the incident page.
PanelColumn = Callable[[], ColumnElement[Any]]


@dataclass(frozen=True)
class Slot:
    """A panel, card or list tool: a template rendered with what its
    provider returns."""

    name: str
    template: str
    provider: Provider | None
    permission: str | None
    order: int
    context: Callable[[Request], Any] | None = None
    # An incident panel's column, read with the incident page's statement.
    read: PanelColumn | None = None
    # Drawn in a card of the page's; else the template brings its own
    # section and its variables are the page's own.
    framed: bool = True


def add_incident_panel(config: Configurator, name: str, template: str, provider: Provider | None = None,
                       *, permission: str | None = None, order: int = 100,
                       read: PanelColumn | str | None = None, framed: bool = True) -> None:
    """Directive: a panel on the incident page. `provider(request, context)`
    returns the template's variables or None; `permission` is checked on the
    incident's context, so the incident's own ACL decides. `read()`: a
    column correlated to `Incident` (a `json_rows` subquery, say) that the
    page reads with the incident, in its one statement, rather than the
    provider sending a statement of its own; the provider finds the value
    with `panel_read(context, name)`. `framed=False`: the template draws
    its own section, and the provider's variables join the page's (the
    core's investigation workspace, actions and comments, whose templates
    are also answered alone to htmx)."""
    slot = Slot(name, template, config.maybe_dotted(provider), permission, order,
                read=config.maybe_dotted(read), framed=framed)
    if slot.read is not None:
        config.read_with_detail(_PANEL_READ + name, slot.read, page_only=True)
    register_once(config, "ehs.incident_panel", name,
                  lambda: _append(config, "ui.incident_panels", slot))


def add_dashboard_card(config: Configurator, name: str, template: str, provider: Provider | None = None,
                       *, permission: str | None = None, order: int = 100,
                       context: Callable[[Request], Any] | str | None = None) -> None:
    """Directive: a card on the home page; `provider(request)` returns the
    template's variables or None to leave the card out; `context` as for
    `add_nav_item`."""
    slot = Slot(name, template, config.maybe_dotted(provider), permission, order,
                config.maybe_dotted(context))
    register_once(config, "ehs.dashboard_card", name,
                  lambda: _append(config, "ui.dashboard_cards", slot))


def add_incident_list_tool(config: Configurator, name: str, template: str,
                           provider: Provider | None = None, *, permission: str | None = None,
                           order: int = 100) -> None:
    """Directive: a tool above the incident list (saved views, for one);
    `provider(request, filters)` gets the list's current filters."""
    slot = Slot(name, template, config.maybe_dotted(provider), permission, order)
    register_once(config, "ehs.incident_list_tool", name,
                  lambda: _append(config, "ui.incident_list_tools", slot))


def panel_read(context: Any, name: str) -> tuple[bool, Any]:
    """(True, value) when the page read panel `name`'s column with the
    incident of `context` (its `IncidentPage.read`), else (False, None):
    the panel's answer to a form, say, which reads the incident on its own."""
    page = getattr(context, "page", None)
    read = page.read if page is not None else {}
    key = _PANEL_READ + name
    return (True, read[key]) if key in read else (False, None)


_PANEL_READ = "ui.panel."


def _append(config: Configurator, key: str, item: Any) -> None:
    items = config.registry.setdefault(key, [])
    items.append(item)
    items.sort(key=lambda entry: (entry.order, entry.name))


def _root(request: Request) -> Any:
    """The application's root context (which grants by role), not the route's
    context: on an incident page `request.root` is the incident, whose ACL
    says nothing of cards."""
    return Root(request)


def rendered_slots(request: Request, key: str, *args: Any, context: Any = None) -> list[dict[str, Any]]:
    """The slots of one kind the caller may see, with their variables."""
    shown = []
    for slot in request.registry.get(key, []):
        where = context if context is not None else (
            slot.context(request) if slot.context else _root(request))
        if slot.permission and not request.has_permission(slot.permission, where):
            continue
        variables = slot.provider(request, *args) if slot.provider else {}
        if variables is None:
            continue
        shown.append({"name": slot.name, "template": slot.template, "vars": variables, "framed": slot.framed})
    return shown
