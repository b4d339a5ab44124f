"""The main menu: the entries registered with `add_nav_item`, those the
caller may open, and their badges. A badge's count comes from whoever
registered the entry (`badge(request)`); the menu knows no domain."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pyramid.config import Configurator
from pyramid.request import Request
from sqlalchemy import select
from sqlalchemy.sql.elements import ColumnElement

from ehs_core import caches
from ehs_core.db import read_rows
from ehs_core.directives import register_once
from ehs_core.security import Root, identity_of

# badge(request) -> a count, or a scalar SQL expression of one (a
# `select(func.count())…scalar_subquery()`): the menu reads every expression
# badge in one statement.
Badge = Callable[[Request], "int | ColumnElement[Any] | None"]
# A badge above this shows "99+": counts need read no further than one past
# it (`ehs_core.db.count_up_to`), whatever the size of the queue.
BADGE_LIMIT = 99


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


def add_nav_item(config: Configurator, name: str, title: str, route_name: str, *,
                 permission: str | None = None, order: int = 100,
                 badge: Badge | None = None,
                 context: Callable[[Request], Any] | str | None = None) -> None:
    """Directive: an entry of the main menu linking to `route_name`; `badge`
    gives a count shown beside it (what waits for the person, say), as a
    number or as a scalar SQL expression the menu reads with the others
    (it may name the bound parameters of `badge_parameters`).
    `context(request)` is the resource whose ACL grants `permission` (a
    plugin's own root, say); the core's Root by default."""
    item = NavItem(name, title, route_name, permission, order, config.maybe_dotted(badge),
                   config.maybe_dotted(context))

    def register() -> None:
        items = config.registry.setdefault("ui.nav_items", [])
        items.append(item)
        items.sort(key=lambda entry: (entry.order, entry.name))

    register_once(config, "ehs.nav_item", name, register)


def badge_parameters(request: Request) -> dict[str, int]:
    """The values of the bound parameters a badge expression may name: the
    person (`bindparam("me")`) and their organization
    (`bindparam("organization")`), so that an expression can be built once."""
    identity = identity_of(request)
    return {"me": identity.user_id, "organization": identity.account.organization_id}


def nav_items(request: Request) -> list[dict[str, Any]]:
    """The caller's menu: the entries they may open, with their badges
    (badges given as SQL expressions read together in one statement); a
    zero count shows no badge."""
    current = request.matched_route.name if request.matched_route is not None else None
    root = Root(request)
    shown: list[dict[str, Any]] = []
    pending: list[tuple[dict[str, Any], ColumnElement[Any]]] = []
    for item in request.registry.get("ui.nav_items", []):
        where = item.context(request) if item.context else root
        if item.permission and not request.has_permission(item.permission, where):
            continue
        badge = item.badge(request) if item.badge else None
        entry = {"name": item.name, "title": item.title, "url": request.route_path(item.route_name),
                 "badge": badge, "current": item.route_name == current}
        if isinstance(badge, ColumnElement):
            pending.append((entry, badge))
        shown.append(entry)
    if pending:
        if request.autocommit_reads is None:
            request.dbsession.flush()  # a change of this request's counts too
        badges = tuple(badge for _, badge in pending)
        # One statement per set of badges, by their identity (SQL expressions
        # compare into SQL, not into True or False); kept with them.
        _, statement = caches.named(request.registry, "menu badge statements", 64).made(
            tuple(map(id, badges)), lambda: (badges, select(*badges)))
        counts = read_rows(request, statement, badge_parameters(request)).one()
        for (entry, _), count in zip(pending, counts, strict=True):
            entry["badge"] = int(count or 0) or None
    for entry in shown:
        if entry["badge"] is not None:
            entry["badge_text"] = f"{BADGE_LIMIT}+" if entry["badge"] > BADGE_LIMIT else str(entry["badge"])
    return shown
