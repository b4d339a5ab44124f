"""Saved views: named filters of the incident list or the analytics page,
the owner's own and those shared by supervisors (spec "Statistics and
views"). The JSON API and the incident list page both go through here."""

from __future__ import annotations

from typing import Any

from pyramid.request import Request
from sqlalchemy import or_, select

from ehs_core.errors import Forbidden, NotFound
from ehs_core.security import Role, role_at_least
from ehs_plugins.analytics.models import SavedView


def visible_views(request: Request, page: str | None = None) -> list[SavedView]:
    """The caller's views and the shared ones, by name."""
    stmt = select(SavedView).where(or_(SavedView.owner_id == request.identity.user_id,
                                       SavedView.shared.is_(True)))
    if page is not None:
        stmt = stmt.where(SavedView.page == page)
    return list(request.dbsession.execute(stmt.order_by(SavedView.name, SavedView.id)).scalars())


def save_view(request: Request, data: dict[str, Any]) -> SavedView:
    """Keep validated filters under a name; sharing needs a supervisor."""
    if data["shared"] and not role_at_least(request.identity.role, Role.supervisor):
        raise Forbidden("Sharing a view needs the supervisor role")
    view = SavedView(owner_id=request.identity.user_id, page=data["page"], name=data["name"],
                     filters=data.get("filters", {}), shared=data["shared"])
    request.dbsession.add(view)
    request.dbsession.flush()
    return view


def delete_view(request: Request, view_id: int) -> None:
    """The owner or an admin deletes; others see a shared view, not delete it."""
    view = request.dbsession.get(SavedView, view_id)
    identity = request.identity
    admin = role_at_least(identity.role, Role.admin)
    if view is None or not (view.shared or view.owner_id == identity.user_id or admin):
        raise NotFound()
    if view.owner_id != identity.user_id and not admin:
        raise Forbidden("Only the owner or an admin can delete this view")
    request.dbsession.delete(view)
