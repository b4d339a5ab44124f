"""Incident pages: the detail (the page every mail links to) and the forms
on it (transition, edit, comment, upload), and what the list (`list_pages`)
and the report form (`report_pages`) share with them. Each is an adapter
over the operations the JSON API calls (`filing`, `listing`, `comments`, `workflow.transitions`,
`attachments.storage`), with the same schemas, context factory and
permissions, so a page can do exactly what the API allows the same person.

Plain forms post and redirect (they work without JavaScript); with htmx the
list's filters, the area picker and comments swap a fragment instead.
"""

from __future__ import annotations

import datetime as dt
import uuid
from typing import Any

import colander
from pyramid.config import Configurator
from pyramid.httpexceptions import HTTPFound
from pyramid.i18n import TranslationStringFactory
from pyramid.request import Request

from ehs_core.attachments import storage, thumbnails
from ehs_core.audit.timeline import (
    NO,
    SOMEONE_WORD,
    YES,
    HistoryRow,
    comments_and_history,
    summary,
    which_of,
)
from ehs_core.errors import DomainError
from ehs_core.incidents import FACTORY, comments, filing
from ehs_core.incidents.extensions import Reporter, reporter_of
from ehs_core.incidents.models import Incident, IncidentType, Severity, Status
from ehs_core.incidents.resources import IncidentContext, page_context, page_factory, read_incident_page
from ehs_core.incidents.schemas import CommentSchema, IncidentUpdateSchema
from ehs_core.incidents.serialize import incident_json, shown_names
from ehs_core.security import Permission
from ehs_core.sites.services import site_choices, site_index, site_timezone
from ehs_core.sites.zones import site_zone as zone_of
from ehs_core.ui.directives import rendered_slots
from ehs_core.ui.forms import (
    INT,
    OPTIONAL_INT,
    OPTIONAL_TEXT,
    TEXT,
    errors_of,
    json_values,
    local_to_iso,
)
from ehs_core.ui.paths import paths_by_id, route_path, route_paths
from ehs_core.ui.rendering import (
    label,
)
from ehs_core.workflow import transition_warnings
from ehs_core.workflow.schemas import TransitionSchema
from ehs_core.workflow.sections import moves
from ehs_core.workflow.transitions import move_incident

PAGE = r"/incidents/{number:\d{1,9}}"
_ = TranslationStringFactory("ehs")

# What each type means, in a line: people confuse them.
TYPE_HINTS = {
    IncidentType.near_miss: "Nothing was hurt or damaged, but it could have been.",
    IncidentType.hazard: "A condition that could hurt someone if nothing is done (a spill, a missing guard).",
    IncidentType.injury: "Someone was hurt at work.",
    IncidentType.illness: "Someone became ill because of work (skin, breathing, hearing, poisoning).",
    IncidentType.property_damage: "Equipment, a vehicle or a building was damaged; nobody was hurt.",
    IncidentType.environmental: "A spill, leak or release to air, water or soil.",
}
SEVERITY_HINTS = {
    Severity.low: "First aid at most; easily put right.",
    Severity.medium: "Medical treatment or a day's disruption.",
    Severity.high: "Serious harm or damage, or it could easily have been.",
    Severity.critical: "Life-threatening, a fatality, or a major release.",
}
# The forms of the incident page, by the name its templates use.
DETAIL_FORMS = {"edit": "page.incident_edit", "transition": "page.incident_transition",
                "attachments": "page.incident_attachments", "comments": "page.incident_comments"}
# Where to go to meet the condition that holds a transition back.
BLOCKED_ANCHORS = {Status.actions: "investigation", Status.verification: "actions",
                   Status.closed: "actions"}

FORM_FIELDS = {
    "title": TEXT, "type": TEXT, "severity": TEXT, "siteId": INT, "areaId": OPTIONAL_INT,
    "locationDetail": OPTIONAL_TEXT, "description": OPTIONAL_TEXT, "immediateAction": OPTIONAL_TEXT,
}
LIST_FILTERS = ("type", "severity", "status", "siteId", "areaId", "from", "to")


def active_sites(request: Request, include_archived: bool = False) -> list[dict[str, Any]]:
    """Sites and their areas as the pickers and filters show them
    ({id, name, timezone, areas: [{id, name}]})."""
    return site_choices(request, include_archived)


def incident_zone_name(request: Request, incident: Incident) -> str | None:
    """The IANA zone of the incident's site (None: the server's)."""
    return site_timezone(request, incident.site_id)


def zone_named(name: str | None, request: Request) -> dt.tzinfo:
    return zone_of(name, request.registry)


def site_zone(request: Request, sites: list[dict[str, Any]], site_id: Any) -> dt.tzinfo:
    """The chosen site's zone (the server's before one is chosen)."""
    for site in sites:
        if site["id"] == site_id:
            return zone_named(site["timezone"], request)
    return zone_named(None, request)


def report_values(request: Request, sites: list[dict[str, Any]], spec: dict[str, str]) -> dict[str, Any]:
    """The form's fields as the API's body. A time the person typed is read
    in the chosen site's zone; the "now" the form was filled in with, kept
    as it was shown, is the instant it was shown at: before a site is
    chosen that "now" is the server's wall clock, which read in a site west
    of the server lies in the future and was refused."""
    values = json_values(request.POST, spec)
    if "occurredAt" in request.POST:
        typed = request.POST.get("occurredAt")
        shown_now = request.POST.get("nowShown")
        if typed and typed == shown_now and is_instant(request.POST.get("nowAt")):
            values["occurredAt"] = request.POST["nowAt"]
        else:
            values["occurredAt"] = local_to_iso(typed, site_zone(request, sites, values.get("siteId")))
    return values


def is_instant(value: Any) -> bool:
    """An ISO 8601 time with its offset (the form's own "now")."""
    if not isinstance(value, str) or len(value) > 40:
        return False
    try:
        return dt.datetime.fromisoformat(value).tzinfo is not None
    except ValueError:
        return False


# --- detail -----------------------------------------------------------------


def detail_values(request: Request, context: IncidentContext) -> dict[str, Any]:
    """The incident page's values, from the incident as `read_incident_page`
    reads it: on a GET, the page's context factory read it; a form that
    answers with the whole page (a refused move, say) has changed the ORM
    object, so what it changed is flushed and the page read the same way,
    and the page shows the incident in one shape either way."""
    if context.page is None:
        request.dbsession.flush()
        context = page_context(request, read_incident_page(request, context.incident.number))
    incident = context.incident
    item = incident_json(request, incident, detail=True, read=context.page.sections)
    transitions = moves(request, incident)  # as the detail's `transitions` section read them
    can = item["can"]  # the detail's `can` section: the same permissions, asked once
    zone_name = incident_zone_name(request, incident)
    statuses = list(Status)
    status_index = statuses.index(Status(incident.status))
    # A closed incident's one move is its reopening (the spec's word): its
    # button says so, where "Move to Investigation" read as a step on.
    reopening = incident.status == Status.closed
    # Who filed a report without an account, as a plugin knows it (issue #36 item 5).
    reported = reporter_of(request, item) if item.get("reporter") is None else None
    values = {
        "incident": incident, "item": item, "transitions": transitions, "can": can,
        "paths": route_paths(request, DETAIL_FORMS, number=incident.number),
        "file_paths": paths_by_id(request, "attachment", [f["id"] for f in item.get("attachments") or ()]),
        "preview_paths": paths_by_id(request, "attachment.preview", [
            f["id"] for f in item.get("attachments") or () if thumbnails.previewed(f["contentType"])]),
        "action_paths": paths_by_id(request, "page.action", [a["id"] for a in item.get("actions") or ()]),
        "zone": zone_name,
        "statuses": statuses, "status_index": status_index,
        "blocked_anchors": BLOCKED_ANCHORS, "reopening": reopening,
        **(people := people_values(request, incident)),
        "history": history_entries(request, people["history"], people["comment_authors"], item, reported),
        "reported": reported,
        # What a plugin says a person should know before a move (never a refusal).
        "move_warnings": transition_warnings(request, incident, [t["to"] for t in transitions]),
        "errors": {},
    }
    values["panels"] = panels = rendered_slots(request, "ui.incident_panels", context, context=context)
    for panel in panels:
        if not panel["framed"]:  # the core's own panels: their values are the page's
            values.update(panel["vars"])
    return values


def form_values(request: Request, sites: list[dict[str, Any]]) -> dict[str, Any]:
    return {"sites": sites, "types": [(t, TYPE_HINTS[t]) for t in IncidentType],
            "severities": [(s, SEVERITY_HINTS[s]) for s in Severity],
            "server_zone": zone_named(None, request)}


def comment_values(request: Request, incident: Incident) -> dict[str, Any]:
    items = comments.list_comments(request, incident)
    authors = shown_names(request, {c.author_id for c in items})
    return {"comments": items, "comment_client_id": str(uuid.uuid4()), "comment_authors": authors}


def people_values(request: Request, incident: Incident) -> dict[str, Any]:
    """Comments and the history, read together."""
    said, history, names = comments_and_history(request, incident)
    # The comment form's idempotency key: sent twice, the comment is stored once.
    return {"comments": said, "comment_authors": names, "history": history,
            "comment_client_id": str(uuid.uuid4()), "upload_client_id": str(uuid.uuid4())}


def history_entries(request: Request, history: list[HistoryRow], names: dict[int, str],
                    item: dict[str, Any] | None = None, reported: Reporter | None = None,
                    ) -> list[dict[str, Any]]:
    """The history as the page lists it: when, who (None: an anonymous
    report) and what, in the person's words (`audit.timeline.summary`):
    each changed field old → new, and which action or root cause, named as
    the incident's detail `item` shows them to this reader (issue #36 item 12).
    A report filed without an account is by the name its reporter typed
    and what they reported through (`reported`, issue #36 item 5)."""
    localizer = request.localizer
    item = item or {}
    titles = {("action.", a["id"]): a["title"] for a in item.get("actions") or ()}
    titles |= {("root_cause.", c["id"]): c["description"] for c in item.get("rootCauses") or ()}
    index = site_index(request)
    people = shown_names(request, {change.get(key) for entry in history if entry.changes
                                   for field, change in entry.changes.items() if isinstance(change, dict)
                                   and field in ("assigneeId", "leadId") for key in ("old", "new")} - {None})
    causes = {c["id"]: c["description"] for c in item.get("rootCauses") or ()}

    def value(field: str, raw: Any) -> str:
        if raw is None or raw == "" or raw == []:
            return "—"
        if field in ("assigneeId", "leadId"):
            return people.get(raw) or localizer.translate(SOMEONE_WORD)
        if field == "siteId":
            return (index["site"].get(raw) or {}).get("name", str(raw))
        if field == "areaId":
            return (index["area"].get(raw) or {}).get("path", str(raw))
        if field == "rootCauseId":
            return causes.get(raw, str(raw))
        if isinstance(raw, bool):
            return localizer.translate(YES if raw else NO)
        if isinstance(raw, list):
            raw = "; ".join(str(part) for part in raw)
        text = str(raw)
        if field in ("type", "severity", "status", "kind"):
            return localizer.translate(label(text))
        if field == "occurredAt":
            return text[:16].replace("T", " ")
        return text if len(text) <= 80 else text[:79] + "…"

    entries = []
    for entry in history:
        prefix = next((p for p in ("action.", "root_cause.") if entry.action.startswith(p)), None)
        raw_id = entry.changes.get("id") if entry.changes else None
        raw_id = raw_id.get("new") or raw_id.get("old") if isinstance(raw_id, dict) else None
        which = titles.get((prefix, raw_id)) if prefix else None
        actor = names.get(entry.actor_id)
        if actor is None and reported is not None and entry.action == "incident.created":
            actor = reporter_words(request, reported)
        entries.append({"at": entry.at, "actor": actor,
                        "summary": summary(localizer, entry.action, entry.changes, value,
                                           which or which_of(entry.action, entry.changes))})
    return entries


def reporter_words(request: Request, reported: Reporter) -> str:
    """"Kim Kiosk, through the reporting link “Gate tablet”" (or
    "Anonymous, through …" when they gave no name)."""
    localizer = request.localizer
    name = reported.name or localizer.translate(_("Anonymous"))
    if not reported.through:
        return name
    return localizer.translate(_("${name}, through ${what}",
                                 mapping={"name": name, "what": reported.through}))


def incident_detail(context: IncidentContext, request: Request) -> dict[str, Any]:
    return detail_values(request, context)


def transition(context: IncidentContext, request: Request) -> Any:
    target = request.POST.get("to", "")
    try:
        if not isinstance(target, str) or target not in {s.value for s in Status}:
            raise colander.Invalid(colander.SchemaNode(colander.String(), name="to"),
                                   "Choose where the incident moves")
        # The API's own schema: its text rules (no NUL, which was a 500 on
        # PostgreSQL, nor other control characters) hold for the page too.
        data = TransitionSchema().deserialize(json_values(request.POST, {"to": TEXT, "note": OPTIONAL_TEXT}))
        move_incident(request, context.incident, target, data["note"] or None)
    except (colander.Invalid, DomainError) as exc:
        request.response.status = getattr(exc, "status", 400)
        return detail_values(request, context) | {"errors": {"transition": first_error(exc)}}
    return HTTPFound(request.route_path("page.incident", number=context.incident.number,
                                        _query={"notice": "moved"}))


def first_error(exc: Exception) -> str:
    errors = errors_of(exc)
    return next(iter(errors.values()), str(exc))


def edit_form(context: IncidentContext, request: Request) -> dict[str, Any]:
    incident = context.incident
    sites = active_sites(request, include_archived=True)
    zone = site_zone(request, sites, incident.site_id)
    values = {"title": incident.title, "type": incident.type, "severity": incident.severity,
              "siteId": incident.site_id, "areaId": incident.area_id,
              "locationDetail": incident.location_detail, "description": incident.description,
              "immediateAction": incident.immediate_action,
              "occurredAt": incident.occurred_at.astimezone(zone).strftime("%Y-%m-%dT%H:%M")}
    return form_values(request, sites) | {"incident": incident, "values": values, "errors": {}}


def edit(context: IncidentContext, request: Request) -> Any:
    sites = active_sites(request, include_archived=True)
    values = report_values(request, sites, FORM_FIELDS)
    try:
        data = IncidentUpdateSchema().deserialize(values)
        filing.update_incident(request, context.incident, data)
    except (colander.Invalid, DomainError) as exc:
        request.response.status = 400
        shown = {k: v for k, v in request.POST.items()}
        return form_values(request, sites) | {"incident": context.incident, "values": shown,
                                              "errors": errors_of(exc)}
    return HTTPFound(request.route_path("page.incident", number=context.incident.number,
                                        _query={"notice": "saved"}))


def add_comment(context: IncidentContext, request: Request) -> Any:
    htmx = request.headers.get("HX-Request") == "true"
    try:
        data = CommentSchema().deserialize(json_values(request.POST, {"body": TEXT, "clientId": TEXT}))
        comments.add_comment(request, context.incident, data["body"], data.get("clientId"))
        errors: dict[str, str] = {}
    except colander.Invalid as exc:
        request.response.status = 400 if not htmx else 200
        errors = errors_of(exc)
        if not htmx:
            return detail_values(request, context) | {"errors": {"comment": errors.get("body", "")}}
    if htmx:
        request.override_renderer = "ehs_core:templates/incidents/comments.html"
        zone = incident_zone_name(request, context.incident)
        number = context.incident.number
        return {"incident": context.incident, **comment_values(request, context.incident), "zone": zone,
                "paths": {"comments": route_path(request, "page.incident_comments", number=number)},
                "can": {"comment": True}, "errors": {"comment": errors.get("body")} if errors else {},
                "announce": None if errors else request.localizer.translate("Your comment was added.")}
    return HTTPFound(request.route_path("page.incident", number=context.incident.number,
                                        _query={"notice": "commented"}, _anchor="comments"))


def upload(context: IncidentContext, request: Request) -> Any:
    files = [f for f in request.POST.getall("file") if hasattr(f, "file")]
    if not files:
        request.response.status = 400
        return detail_values(request, context) | {
            "errors": {"upload": request.localizer.translate("Choose a photo or PDF to add")}}
    refused = []
    # The form's idempotency key; each of its files is keyed by its place in
    # the form, so the same form sent again stores none of them twice.
    try:
        form_key = uuid.UUID(request.POST.get("clientId", ""))
    except ValueError:
        form_key = None
    for index, item in enumerate(files):
        key = str(uuid.uuid5(form_key, str(index))) if form_key is not None else None
        try:
            storage.save_upload_once(request, context.incident, item, request.identity.user_id, key)
        except storage.Refused as exc:
            refused.append(f"{item.filename}: {exc.message}")
    if refused:
        request.response.status = 400
        return detail_values(request, context) | {"errors": {"upload": " ".join(refused)}}
    return HTTPFound(request.route_path("page.incident", number=context.incident.number,
                                        _query={"notice": "uploaded"}, _anchor="attachments"))


def includeme(config: Configurator) -> None:
    # The page's values, for the other packages' forms that answer with the whole page.
    config.add_request_method(detail_values, "incident_page_values")
    # The comments, a panel of the page like any other (its template draws its own section).
    config.add_incident_panel("comments", "ehs_core:templates/incidents/comments.html",
                              permission=Permission.view_incident, order=1000, framed=False)
    config.add_route("page.incident", PAGE, factory=page_factory)
    config.add_route("page.incident_transition", PAGE + "/transition", factory=FACTORY)
    config.add_route("page.incident_edit", PAGE + "/edit", factory=FACTORY)
    config.add_route("page.incident_comments", PAGE + "/comments", factory=FACTORY)
    config.add_route("page.incident_attachments", PAGE + "/attachments", factory=FACTORY)
    view = config.add_view
    view(incident_detail, route_name="page.incident", request_method="GET",
         renderer="ehs_core:templates/incidents/detail.html", permission=Permission.view_incident)
    view(transition, route_name="page.incident_transition", request_method="POST",
         renderer="ehs_core:templates/incidents/detail.html", permission=Permission.view_incident)
    view(edit_form, route_name="page.incident_edit", request_method="GET",
         renderer="ehs_core:templates/incidents/edit.html", permission=Permission.update_incident)
    view(edit, route_name="page.incident_edit", request_method="POST",
         renderer="ehs_core:templates/incidents/edit.html", permission=Permission.update_incident)
    view(add_comment, route_name="page.incident_comments", request_method="POST",
         renderer="ehs_core:templates/incidents/detail.html", permission=Permission.comment_incident)
    view(upload, route_name="page.incident_attachments", request_method="POST",
         renderer="ehs_core:templates/incidents/detail.html", permission=Permission.upload_attachment)
