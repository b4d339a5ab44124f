"""Directives through which the core and plugins add screens: menu entries,
panels on the incident page, cards on the home page and tools above the
incident list. Each is ordered, shown only to callers who hold its
permission, and claimed once by name like every other directive; a disabled
plugin never calls them, so it adds nothing."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pyramid.config import Configurator
from pyramid.request import Request
from sqlalchemy import select
from sqlalchemy.sql.elements import ColumnElement

from ehs_core.db import PlainRead, read_rows
from ehs_core.directives import register_once
from ehs_core.incidents.extensions import SectionColumn, read_also, read_with_sections
from ehs_core.incidents.queues import queues_version
from ehs_core.security import identity_of

# provider(request, ...) -> the template's variables, or None to show nothing.
Provider = Callable[..., dict[str, Any] | None]
# badge(request) -> a count, or a scalar SQL expression of one (a
# `select(func.count())…scalar_subquery()`): the menu reads every expression
# badge in one statement, so its counts cost one round trip on every page.
Badge = Callable[[Request], "int | ColumnElement[Any] | None"]
# A badge above this shows "99+": counts need read no further than one past
# it (`ehs_core.db.count_up_to`), whatever the size of the queue.
BADGE_LIMIT = 99
# Menus of different shapes (roles, enabled plugins) each keep their statement.
_STATEMENTS_KEPT = 64


@dataclass(frozen=True)
class NavItem:
    name: str
    title: str
    route_name: str
    permission: str | None
    order: int
    badge: Badge | None
    # The context `permission` is checked on (default: the core's Root).
    context: Callable[[Request], Any] | None = None
    # The badge's count changes only with the organization's queues.
    badge_follows_queues: bool = False


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
    read: SectionColumn | None = None


def add_nav_item(config: Configurator, name: str, title: str, route_name: str, *,
                 permission: str | None = None, order: int = 100,
                 badge: Badge | None = None,
                 context: Callable[[Request], Any] | str | None = None,
                 badge_follows_queues: bool = False) -> None:
    """Directive: an entry of the main menu linking to `route_name`; `badge`
    gives a count shown beside it (e.g. what waits for the person), as a
    number or as a scalar SQL expression the menu reads with the others.
    `badge_follows_queues`: the expression counts only what the
    organization's queues version follows (incidents by status and
    investigation lead, corrective actions by status and assignee: see
    migration 0016_queues_version), so the worker keeps the person's count
    until that version moves. `context(request)` is the resource whose ACL
    grants `permission` (a plugin's own root, say); the core's Root by
    default. Whether an entry is shown is worked out once per set of
    principals (roles, user), so the context's ACL must grant by principals
    alone, as a root's does."""
    item = NavItem(name, title, route_name, permission, order, config.maybe_dotted(badge),
                   config.maybe_dotted(context), badge_follows_queues)
    register_once(config, "ehs.nav_item", name,
                  lambda: _append(config, "ui.nav_items", item))


def add_incident_panel(config: Configurator, name: str, template: str, provider: Provider | None = None,
                       *, permission: str | None = None, order: int = 100,
                       read: SectionColumn | str | None = None) -> None:
    """Directive: a panel on the incident page. `provider(request, context)`
    returns the template's variables or None; `permission` is checked on the
    incident's context, so the incident's own ACL decides. `read()`: a
    column correlated to `Incident` (a `json_rows` subquery, say) that the
    page reads with the incident, in its one statement, rather than the
    provider sending a statement of its own; the provider finds the value
    with `panel_read(request, name, incident_id)`."""
    slot = Slot(name, template, config.maybe_dotted(provider), permission, order,
                read=config.maybe_dotted(read))
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


def read_panels_with_sections(request: Request) -> None:
    """The incident page: have each panel's `read` column read with the
    incident (`read_with_sections`)."""
    for slot in request.registry.get("ui.incident_panels", ()):
        if slot.read is not None:
            read_with_sections(request, _PANEL_READ + slot.name, slot.read)


def panel_read(request: Request, name: str, incident_id: int) -> tuple[bool, Any]:
    """(True, value) when the page read panel `name`'s column with the
    incident, else (False, None): the panel's answer to a form, say, which
    reads the incident on its own."""
    return read_also(request, _PANEL_READ + name, incident_id)


_PANEL_READ = "ui.panel."


def _append(config: Configurator, key: str, item: Any) -> None:
    items = config.registry.setdefault(key, [])
    items.append(item)
    items.sort(key=lambda entry: (entry.order, entry.name))


def _root(request: Request) -> Any:
    """The application's root context (which grants by role), not the route's
    context: on an incident page `request.root` is the incident, whose ACL
    says nothing of menus and cards."""
    from ehs_core.security import Root

    return Root(request)


Pending = list[tuple[dict[str, Any], ColumnElement[Any]]]
# The menu whose counts an incident page has read with its sections.
_WITH_SECTIONS = "ehs.menu.with_sections"


@dataclass(frozen=True)
class MenuCounts:
    """What the menu's SQL reads for its badges, and how the person's counts
    are kept. When the worker kept them (`kept`), only the organization's
    queues version is read; the counts are read again only when it moved."""

    expressions: tuple[ColumnElement[Any], ...]  # the badges' counts
    follows: tuple[bool, ...]  # by badge: whether it follows the queues
    key: tuple[Any, ...] | None = None  # whose counts these are (None: none kept)
    kept: tuple[int, tuple[Any, ...]] | None = None  # (version, counts) the worker kept

    @property
    def columns(self) -> tuple[ColumnElement[Any], ...]:
        """What to read: the counts, after the queues' version when they are
        kept by it, or the version alone when the worker has them."""
        if self.key is None:
            return self.expressions
        if self.kept is not None:
            return (queues_version(),)
        return (queues_version(), *self.expressions)


# Each person's menu counts with the queues' version they were counted at
# (by organization, person, principals and badges), kept by the worker:
# counting them (the triage queue to "99+", the person's actions; every
# count's plan set up even when the "99+" short-cut leaves it unrun) was a
# fifth of the incident page with the CPU's caches cold, and they change
# far less often than people open pages.
# Kept in the app's registry: two apps in one process (a test's app
# without a plugin, say) have menus of their own.
_KEPT_COUNTS = "ui.kept_counts"
_COUNTS_KEPT = 4096


def _kept(request: Request, name: str) -> dict[tuple[Any, ...], Any]:
    """What the worker keeps for this app under `name` (`_KEPT_COUNTS`, `_KEPT_MENUS`)."""
    registry = request.registry
    found = registry.get(name)
    if found is None:
        found = registry[name] = {}
    return found


def _menu(request: Request) -> tuple[list[dict[str, Any]], Pending, MenuCounts]:
    """The caller's entries, the badges still to be read in SQL, and what
    the SQL reads for them."""
    shown = []
    pending: Pending = []
    follows = []
    current = request.matched_route.name if request.matched_route is not None else None
    for item, url in _entries(request):
        entry = {"name": item.name, "title": item.title, "url": url,
                 "badge": item.badge(request) if item.badge else None,
                 "current": item.route_name == current}
        if isinstance(entry["badge"], ColumnElement):
            pending.append((entry, entry["badge"]))
            follows.append(item.badge_follows_queues)
        shown.append(entry)
    expressions = tuple(expression for _, expression in pending)
    return shown, pending, _menu_counts(request, expressions, tuple(follows))


def _menu_counts(request: Request, expressions: tuple[ColumnElement[Any], ...],
                 follows: tuple[bool, ...]) -> MenuCounts:
    """Counts are kept when every badge follows the queues. A safe request
    may use the counts the worker kept; any other may have changed what
    they count, not committed yet (the version moves in COMMIT on
    PostgreSQL), and counts afresh without keeping them."""
    if not expressions or not all(follows) or request.method not in ("GET", "HEAD"):
        return MenuCounts(expressions, follows)
    identity = identity_of(request)
    key = (identity.account.organization_id, identity.user_id, tuple(identity.principals),
           tuple(map(id, expressions)))
    return MenuCounts(expressions, follows, key, _kept(request, _KEPT_COUNTS).get(key))


# Each person's finished menu on each page (its entries with their badges)
# and the queues' version its counts were read at, kept by the worker where
# every badge follows the queues: building the entries, their counts' key
# and the read of their SQL again was most of the menu's cost on a page,
# for the same menu until the version moves. (version, entries); callers
# read the entries and never change them.
_KEPT_MENUS = "ui.kept_menus"
# The kept menu a page is showing: (its key, what was kept, the incident).
_KEPT_MENU = "ehs.menu.kept"
_VERSION_READ = "ui.menu.version"


def _menu_key(request: Request) -> tuple[Any, ...] | None:
    """Whose menu on which page, when the worker may keep it: a safe request
    of a signed-in person (as for `_menu_counts`), every registered badge
    following the queues."""
    if request.method not in ("GET", "HEAD"):
        return None
    identity = identity_of(request)
    if identity is None or not identity.is_user:
        return None
    registry = request.registry
    follow = registry.get("ui.nav_badges_follow")
    if follow is None:
        follow = registry["ui.nav_badges_follow"] = all(
            item.badge is None or item.badge_follows_queues for item in registry.get("ui.nav_items", []))
    if not follow:
        return None
    route = request.matched_route
    return (identity.account.organization_id, identity.user_id, tuple(identity.principals),
            request.script_name, route.name if route is not None else None)


def _keep_menu(request: Request, key: tuple[Any, ...] | None, version: int | None,
               shown: list[dict[str, Any]]) -> None:
    if key is not None and version is not None:
        kept = _kept(request, _KEPT_MENUS)
        if len(kept) >= _COUNTS_KEPT:
            kept.clear()
        kept[key] = (version, shown)


def _counted(request: Request, counts: MenuCounts, values: Any) -> tuple[int | None, list[Any]]:
    """The badges' counts from what SQL read (`counts.columns`): the kept
    ones while the queues' version is the one they were counted at, else
    counted now (a statement more) and kept with the version; and that
    version (None: the counts are not kept)."""
    if counts.key is None:
        return None, list(values)
    version, *found = values
    kept = counts.kept
    if kept is not None:
        if version == kept[0]:
            return version, list(kept[1])
        counts = MenuCounts(counts.expressions, counts.follows, counts.key)
        version, *found = _read_counts(request, counts)
    if version is not None:
        kept_counts = _kept(request, _KEPT_COUNTS)
        if len(kept_counts) >= _COUNTS_KEPT:  # one per person at most; forget them all now and then
            kept_counts.clear()
        kept_counts[counts.key] = (version, tuple(found))
    return version, found


def _read_counts(request: Request, counts: MenuCounts) -> Any:
    """The menu's columns in a statement of their own."""
    return _read_columns(request, list(counts.columns))


def _read_columns(request: Request, columns: list[ColumnElement[Any]]) -> Any:
    """One row of these badge columns (or the queues' version)."""
    if request.autocommit_reads is None:
        request.dbsession.flush()  # a change of this request's counts too
    statement = _badge_statement(request, columns)
    parameters = badge_parameters(request)
    return (statement.first(request, parameters) if isinstance(statement, PlainRead)
            else read_rows(request, statement, parameters).one())


def read_menu_with_sections(request: Request, incident_id: int | None = None) -> None:
    """The incident page: have the menu's counts read by the statement that
    reads the incident's sections, instead of a statement of their own (the
    menu's round trip was a sixth of the page at 100,000 incidents).
    `incident_id` None: the incident of the request's context, asked before
    it is read (the page's context factory reads it with its sections)."""
    identity = identity_of(request)
    if identity is None or not identity.is_user:
        return
    key = _menu_key(request)
    kept = _kept(request, _KEPT_MENUS).get(key) if key is not None else None
    if kept is not None:  # the version alone is read, and the menu shown as kept while it stands
        read_with_sections(request, _VERSION_READ, _column_of(request, queues_version()),
                           badge_parameters(request))
        request.environ[_KEPT_MENU] = (key, kept, incident_id)
        return
    shown, pending, counts = _menu(request)
    if not all(_on_cursor(request, column) for column in counts.columns):
        return  # the menu reads its counts in a statement of its own (`nav_items`)
    names = []
    parameters = badge_parameters(request)
    for index, column in enumerate(counts.columns):
        names.append(f"ui.menu.badge.{index}")
        read_with_sections(request, names[-1], _column_of(request, column), parameters)
    request.environ[_WITH_SECTIONS] = (shown, pending, counts, names, incident_id)


def _column_of(request: Request, expression: ColumnElement[Any]) -> Callable[[], ColumnElement[Any]]:
    """One column factory per badge expression, so the sections' statement
    that reads it is made once (`read_with_sections` keeps statements by
    their columns' factories)."""
    kept = request.registry.setdefault("ui.badge_columns", {})
    found = kept.get(id(expression))
    if found is None:
        if len(kept) >= _STATEMENTS_KEPT:
            kept.clear()
        # The expression is kept with it, so its id is not reused meanwhile.
        found = kept[id(expression)] = (expression, lambda: expression)
    return found[1]


def nav_items(request: Request) -> list[dict[str, Any]]:
    """The caller's menu: entries they may open, with their badges. Badges
    given as SQL expressions are read together in one statement (or with
    an incident's sections, `read_menu_with_sections`); a zero count shows
    no badge."""
    values = None
    menu = request.environ.pop(_KEPT_MENU, None)
    now = None  # the version read for a kept menu that it no longer matches
    if menu is not None:  # read with an incident's sections
        key, (version, entries), incident_id = menu
        found, now = read_also(request, _VERSION_READ, _incident_of(request, incident_id))
        if found and now == version:
            return entries
    else:
        key = _menu_key(request)
        kept_menu = _kept(request, _KEPT_MENUS).get(key) if key is not None else None
        if kept_menu is not None:
            now = _read_version(request)
            if now == kept_menu[0]:
                return kept_menu[1]
    kept = request.environ.pop(_WITH_SECTIONS, None)
    if kept is not None:
        shown, pending, counts, names, incident_id = kept
        incident_id = _incident_of(request, incident_id)
        read = [read_also(request, name, incident_id) for name in names]
        if all(found for found, _ in read):
            values = [value for _, value in read]
    else:
        shown, pending, counts = _menu(request)
        if now is not None and counts.key is not None:
            if counts.kept is not None and counts.kept[0] == now:
                values = (now,)  # counted at this version already (on another page)
            else:  # at an older one: counted again at once
                counts = MenuCounts(counts.expressions, counts.follows, counts.key)
    version = None
    if pending:
        if values is None:
            values = _read_counts(request, counts)
        version, counted = _counted(request, counts, values)
        for (entry, _), count in zip(pending, counted, strict=True):
            entry["badge"] = int(count or 0) or None
    for entry in shown:
        if entry["badge"] is not None:
            entry["badge_text"] = f"{BADGE_LIMIT}+" if entry["badge"] > BADGE_LIMIT else str(entry["badge"])
    _keep_menu(request, key, version, shown)
    return shown


def _incident_of(request: Request, incident_id: int | None) -> int | None:
    """`incident_id`, else the context's incident (none on an error page)."""
    if incident_id is None:
        incident_id = getattr(getattr(getattr(request, "context", None), "incident", None), "id", None)
    return incident_id


def _read_version(request: Request) -> Any:
    """The organization's queues version, in a statement of its own."""
    return _read_columns(request, [queues_version()])[0]


def _entries(request: Request) -> list[tuple[NavItem, str]]:
    """The entries the caller may open and their paths, worked out once per
    set of principals (the menu's contexts grant by role, like the core's
    Root): their permission checks and paths were half of the menu's cost."""
    kept = request.registry.setdefault("ui.nav_entries", {})
    identity = identity_of(request)
    key = (request.script_name, tuple(identity.principals) if identity is not None else ())
    found = kept.get(key)
    if found is None:
        found = []
        for item in request.registry.get("ui.nav_items", []):
            where = item.context(request) if item.context else _root(request)
            if item.permission and not request.has_permission(item.permission, where):
                continue
            found.append((item, request.route_path(item.route_name)))
        if len(kept) >= 4096:  # one per person at most; forget them all now and then
            kept.clear()
        kept[key] = found
    return found


def badge_parameters(request: Request) -> dict[str, int]:
    """The values of the bound parameters a badge expression may name: the
    person (`bindparam("me")`) and their organization
    (`bindparam("organization")`). So an expression can be built once, and
    its SQL compiled once, rather than on every page (building and compiling
    the core's counts cost a fifth of the list page's CPU)."""
    identity = identity_of(request)
    return {"me": identity.user_id, "organization": identity.account.organization_id}


def _on_cursor(request: Request, expression: ColumnElement[Any]) -> bool:
    """Whether a badge's SQL is written once (a `PlainRead` may send it):
    not an IN of a list of values, which SQLAlchemy writes as it runs."""
    kept = request.registry.setdefault("ui.badges_on_cursor", {})
    found = kept.get(id(expression))
    if found is None:
        if len(kept) >= _STATEMENTS_KEPT:
            kept.clear()
        compiled = select(expression).compile(dialect=request.registry["db.engine"].dialect)
        # The expression is kept with it, so its id is not reused meanwhile.
        found = kept[id(expression)] = (expression, not (compiled.post_compile_params
                                                          or compiled.literal_execute_params))
    return found[1]


def _badge_statement(request: Request, expressions: list[ColumnElement[Any]]) -> Any:
    """One SELECT of the badges, kept per set of expressions (a badge that
    returns the same expression each time reuses it), sent on the DBAPI
    cursor (`PlainRead`: through SQLAlchemy's execution it was a tenth
    of the list page)."""
    kept = request.registry.setdefault("ui.badge_statements", {})
    key = tuple(map(id, expressions))
    found = kept.get(key)
    if found is None:
        if len(kept) >= _STATEMENTS_KEPT:  # badges that build a new expression every time
            kept.clear()
        # The expressions are kept with it, so their ids are not reused meanwhile.
        statement = select(*expressions)
        on_cursor = all(_on_cursor(request, expression) for expression in expressions)
        found = kept[key] = (expressions, PlainRead(statement) if on_cursor else statement)
    return found[1]


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
        shown.append({"name": slot.name, "template": slot.template, "vars": variables})
    return shown
