"""Corrective action pages: the list at /actions (the caller's own, and
everyone's for supervisors and above), the action page /actions/<id> that
the assignment mail and the digest link to, adding an action from the
incident page (for one of its root causes), the assignee's status change in
place and the safety manager's verification of several at once.

Each view adapts `actions.services` with the API's schemas, context factory
(`actions.resources`) and permissions; the services refuse what the API
refuses (an assignee may only move between open, in progress and done; only
a safety manager verifies)."""

from __future__ import annotations

from typing import Any

import colander
from pyramid.config import Configurator
from pyramid.httpexceptions import HTTPFound, HTTPNotFound
from pyramid.request import Request
from sqlalchemy import select
from sqlalchemy.sql.elements import ColumnElement

from ehs_core.actions import actions_json, evidence_of, is_overdue, services, today
from ehs_core.actions.models import ActionStatus, CorrectiveAction
from ehs_core.actions.resources import ActionContext, action_context
from ehs_core.actions.schemas import ActionCreateSchema, ActionFilter, ActionQuerySchema, Scope
from ehs_core.attachments.storage import Refused
from ehs_core.errors import DomainError
from ehs_core.incidents import comments
from ehs_core.incidents.models import Incident
from ehs_core.incidents.resources import IncidentContext
from ehs_core.incidents.serialize import shown_names
from ehs_core.investigation.models import RootCause
from ehs_core.schemas import text, text_problem
from ehs_core.security import Permission, Role, role_at_least
from ehs_core.sites.models import Site
from ehs_core.ui.forms import OPTIONAL_INT, OPTIONAL_TEXT, TEXT, errors_of, json_values
from ehs_core.ui.menu import BADGE_LIMIT
from ehs_core.users.services import assignable_users

PAGE = r"/incidents/{number:\d{1,9}}"
ACTION = r"/actions/{id:\d{1,9}}"

CREATE_FIELDS = {"title": TEXT, "description": OPTIONAL_TEXT, "assigneeId": OPTIONAL_INT,
                 "dueDate": OPTIONAL_TEXT, "rootCauseId": OPTIONAL_INT}
# The tabs of the list, in the order shown.
FILTERS = (ActionFilter.open, ActionFilter.overdue, ActionFilter.awaiting_verification, ActionFilter.done,
           ActionFilter.all)
NOTE_PREFIX = "Note on action “%(title)s”: "
# Rows a page of the list shows: every list pages (an organization's "All"
# tab held twelve thousand rows, 13 MB of HTML).
PAGE_SIZE = 50


def statuses_for(request: Request, action: CorrectiveAction) -> list[str]:
    """The statuses this caller may choose for the action (the rule of
    `services.update_action`, shown as choices): an assignee moves between
    open, in progress and done; a supervisor may also cancel; a safety
    manager may also verify."""
    role = request.identity.role
    if not role_at_least(role, Role.supervisor):
        if action.assignee_id != request.identity.user_id or action.status not in services.ASSIGNEE_STATUSES:
            return []
        return list(services.ASSIGNEE_STATUSES)
    chosen = [ActionStatus.open, ActionStatus.in_progress, ActionStatus.done, ActionStatus.cancelled]
    if role_at_least(role, Role.safety_manager) or action.status == ActionStatus.verified:
        chosen.insert(3, ActionStatus.verified)
    return chosen


def _rows(request: Request, pairs: list[tuple[CorrectiveAction, Incident]]) -> list[dict[str, Any]]:
    """Each action as the API shows it, with its incident, its cause and the
    choices this caller has."""
    actions = [action for action, _ in pairs]
    incidents = {incident.id: incident for _, incident in pairs}
    cause_ids = {a.root_cause_id for a in actions if a.root_cause_id}
    causes = {c.id: c for c in request.dbsession.execute(
        select(RootCause).where(RootCause.id.in_(cause_ids))).scalars()} if cause_ids else {}
    return [{"item": item, "action": action, "cause": causes.get(action.root_cause_id),
             "choices": statuses_for(request, action)}
            for action, item in zip(actions, actions_json(request, actions, incidents), strict=True)]


# --- adding from the incident page -------------------------------------------


def actions_panel(request: Request, context: IncidentContext) -> dict[str, Any]:
    """The incident page's actions (a panel): the people an action can be given to."""
    return {"people": assignable_users(request)}


def add_action(context: IncidentContext, request: Request) -> Any:
    values = json_values(request.POST, CREATE_FIELDS)
    try:
        action = services.create_action(request, context.incident, ActionCreateSchema().deserialize(values))
    except (colander.Invalid, DomainError) as exc:
        request.response.status = getattr(exc, "status", 400)
        return request.incident_page_values(context) | {
            "ws_errors": {"action": errors_of(exc)}, "ws_values": {"action": dict(request.POST.items())}}
    return HTTPFound(request.route_path("page.incident", number=context.incident.number,
                                        _query={"notice": "action-added"}, _anchor=f"action-{action.id}"))


# --- the list ---------------------------------------------------------------


def action_list(request: Request) -> dict[str, Any]:
    can_see_all = bool(request.has_permission(Permission.view_all_actions))
    raw = {k: v for k, v in request.GET.items() if k in ("scope", "filter") and v}
    try:
        query = ActionQuerySchema().deserialize(raw)
    except colander.Invalid:
        query = ActionQuerySchema().deserialize({})
    if not raw.get("filter"):
        query["filter"] = ActionFilter.open
    if query["scope"] == Scope.all and not can_see_all:
        query["scope"] = Scope.mine
    raw_page = request.GET.get("page", "")
    page = int(raw_page) if raw_page.isdigit() and 0 < len(raw_page) <= 6 and int(raw_page) else 1
    pairs, total = services.actions_page(request, query["scope"], query["filter"], PAGE_SIZE,
                                         (page - 1) * PAGE_SIZE)
    if not pairs and page > 1:  # past the end: the last page
        total = services.count_actions(request, query["scope"], query["filter"])
        page = max(1, -(-total // PAGE_SIZE))
        pairs, total = services.actions_page(request, query["scope"], query["filter"], PAGE_SIZE,
                                             (page - 1) * PAGE_SIZE)
    pages = max(1, -(-total // PAGE_SIZE))
    rows = _rows(request, pairs)
    verifier = role_at_least(request.identity.role, Role.safety_manager)
    return {"rows": rows, "scope": query["scope"], "filter": query["filter"], "can_see_all": can_see_all,
            "filters": FILTERS, "total": total, "page": page, "pages": pages,
            "verifier": verifier,
            "verifiable": verifier and any(r["action"].status == ActionStatus.done for r in rows),
            "today": today(request.registry), "errors": {}}


def actions_badge(request: Request) -> ColumnElement[int]:
    """The menu's count: the caller's actions still to do (read with the
    menu's other counts)."""
    return services.open_actions_count(up_to=BADGE_LIMIT + 1)


# --- one action -------------------------------------------------------------


def action_values(request: Request, context: ActionContext) -> dict[str, Any]:
    action = context.action
    incident = context.incident_context.incident
    row = _rows(request, [(action, incident)])[0]
    prefix = request.localizer.translate(NOTE_PREFIX) % {"title": action.title}
    notes = [c for c in comments.list_comments(request, incident) if c.body.startswith(prefix)]
    zone = request.dbsession.execute(select(Site.timezone).where(Site.id == incident.site_id)).scalar()
    return {"row": row, "action": action, "item": row["item"], "incident": incident, "cause": row["cause"],
            "evidence": evidence_of(request, [action.id]).get(action.id, []),
            "notes": [(n, n.body[len(prefix):]) for n in notes],
            "note_authors": shown_names(request, {n.author_id for n in notes}), "zone": zone,
            "can_note": bool(request.has_permission(Permission.comment_incident, context)),
            "overdue": is_overdue(action, today(request.registry)), "errors": {}}


def action_page(context: ActionContext, request: Request) -> dict[str, Any]:
    return action_values(request, context)


def change_status(context: ActionContext, request: Request) -> Any:
    """The status, changed in place: htmx gets the list row (or the action
    page's status part) back; a plain form goes back where it came from."""
    status = request.POST.get("status", "")
    htmx = request.headers.get("HX-Request") == "true"
    from_list = request.POST.get("from") == "list"
    error = None
    refused = add_evidence(request, context)
    if refused:
        # Nothing of this answer is kept: the person sends it again whole.
        request.tm.doom()
        request.response.status = 400
        return action_values(request, context) | {"errors": {"evidence": refused}}
    try:
        if status not in {s.value for s in ActionStatus}:
            raise colander.Invalid(colander.SchemaNode(colander.String(), name="status"),
                                   request.localizer.translate("Choose a status"))
        services.update_action(request, context.incident_context.incident, context.action,
                               {"status": ActionStatus(status)})
        request.dbsession.flush()
    except (colander.Invalid, DomainError) as exc:
        error = next(iter(errors_of(exc).values()), str(exc))
        request.response.status = 200 if htmx else getattr(exc, "status", 400)
    if htmx and from_list:
        request.override_renderer = "ehs_core:templates/actions/row.html"
        row = _rows(request, [(context.action, context.incident_context.incident)])[0]
        announce = None if error else request.localizer.translate("Status changed to %(status)s.") % {
            "status": request.localizer.translate(ActionStatus(context.action.status).replace("_", " ")
                                                  .capitalize())}
        return {"row": row, "today": today(request.registry), "verifier":
                role_at_least(request.identity.role, Role.safety_manager),
                "row_error": error, "announce": announce}
    if error:
        request.override_renderer = "ehs_core:templates/actions/detail.html"
        return action_values(request, context) | {"errors": {"status": error}}
    if from_list:
        return HTTPFound(request.route_path("page.actions", _query={"notice": "saved"}))
    return HTTPFound(request.route_path("page.action", id=context.action.id, _query={"notice": "saved"}))


def add_evidence(request: Request, context: ActionContext) -> str | None:
    """The photos or PDFs and the note sent with "Mark as done", kept as the
    action's evidence (issue #36 item 13); the refusal in words, if any."""
    files = [item for item in request.POST.getall("evidence") if hasattr(item, "file")]
    note = request.POST.get("note")
    note = note.strip() if isinstance(note, str) else ""
    refused = []
    for item in files:
        try:
            services.add_evidence(request, context.incident_context.incident, context.action, item)
        except Refused as exc:
            refused.append(f"{item.filename}: {request.localizer.translate(exc.message)}")
    if refused:
        return " ".join(refused)
    if note:
        if len(note) > 19000 or text_problem(note):
            return request.localizer.translate("The note must be plain text of at most 19000 characters")
        prefix = request.localizer.translate(NOTE_PREFIX) % {"title": context.action.title}
        comments.add_comment(request, context.incident_context.incident, prefix + note)
    return None


class NoteSchema(colander.MappingSchema):
    body = text(19000, min_length=1)


def add_note(context: ActionContext, request: Request) -> Any:
    """A note on the action, kept as a comment on its incident (so the
    incident's people read it in one place) that names the action."""
    body = request.POST.get("body")
    body = body.strip() if isinstance(body, str) else ""
    if not body:
        request.response.status = 400
        return action_values(request, context) | {
            "errors": {"body": request.localizer.translate("Write the note first")}}
    try:
        # The API's text type (no NUL, which was a 500 on PostgreSQL, nor
        # other control characters), bounded so the comment with its prefix
        # stays within the API's 20000 characters.
        body = NoteSchema().deserialize({"body": body})["body"]
    except colander.Invalid as exc:
        request.response.status = 400
        return action_values(request, context) | {"errors": errors_of(exc)}
    prefix = request.localizer.translate(NOTE_PREFIX) % {"title": context.action.title}
    comments.add_comment(request, context.incident_context.incident, prefix + body)
    return HTTPFound(request.route_path("page.action", id=context.action.id,
                                        _query={"notice": "commented"}, _anchor="notes"))


def verify_several(request: Request) -> Any:
    """A safety manager verifies every ticked action that is done. Each goes
    through the same context (visibility) and operation as one alone; one
    refusal leaves the others verified and is named on the page."""
    ids = [raw for raw in request.POST.getall("id")
           if isinstance(raw, str) and raw.isdigit() and len(raw) <= 9]
    refused = []
    for raw in ids:
        try:
            context = action_context(request, int(raw))
        except HTTPNotFound:
            refused.append(raw)
            continue
        try:
            if context.action.status != ActionStatus.done:
                raise DomainError("Only an action marked done can be verified")
            services.update_action(request, context.incident_context.incident, context.action,
                                   {"status": ActionStatus.verified})
        except DomainError:
            refused.append(context.action.title)
    if not ids:
        request.response.status = 400
        return action_list(request) | {"errors": {"verify": request.localizer.translate(
            "Tick the actions to verify first")}}
    if refused:
        request.response.status = 409
        return action_list(request) | {"errors": {"verify": request.localizer.translate(
            "Not verified (not done, or no longer there): %(names)s") % {"names": ", ".join(refused)}}}
    return HTTPFound(request.route_path("page.actions", _query={
        "filter": ActionFilter.awaiting_verification, "scope": Scope.all, "notice": "verified"}))


def includeme(config: Configurator) -> None:
    incident_factory = "ehs_core.incidents.resources.incident_factory"
    factory = "ehs_core.actions.resources.action_factory"
    # The incident's actions on its page, a panel like any other (its template draws its own section).
    config.add_incident_panel("actions", "ehs_core:templates/actions/incident_actions.html", actions_panel,
                              permission=Permission.view_incident, order=20, framed=False)
    config.add_route("page.incident_actions", PAGE + "/actions", factory=incident_factory)
    config.add_route("page.actions", "/actions")
    config.add_route("page.actions_verify", "/actions/verify")
    config.add_route("page.action", ACTION, factory=factory)
    config.add_route("page.action_status", ACTION + "/status", factory=factory)
    config.add_route("page.action_note", ACTION + "/note", factory=factory)
    view = config.add_view
    view(add_action, route_name="page.incident_actions", request_method="POST",
         renderer="ehs_core:templates/incidents/detail.html", permission=Permission.update_incident)
    view(action_list, route_name="page.actions", request_method="GET",
         renderer="ehs_core:templates/actions/list.html", permission=Permission.signed_in)
    view(verify_several, route_name="page.actions_verify", request_method="POST",
         renderer="ehs_core:templates/actions/list.html", permission=Permission.verify_actions)
    view(action_page, route_name="page.action", request_method="GET",
         renderer="ehs_core:templates/actions/detail.html", permission=Permission.view_incident)
    view(change_status, route_name="page.action_status", request_method="POST",
         renderer="ehs_core:templates/actions/detail.html", permission=Permission.edit_action)
    view(add_note, route_name="page.action_note", request_method="POST",
         renderer="ehs_core:templates/actions/detail.html", permission=Permission.comment_incident)
    config.add_nav_item("actions", "Actions", "page.actions", permission=Permission.signed_in, order=25,
                        badge=actions_badge)
