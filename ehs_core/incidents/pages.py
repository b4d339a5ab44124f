"""Incident pages: the list, the detail (the page every mail links to), the
report form, and the forms on the detail page (transition, edit, comment,
upload). Each is an adapter over the operations the JSON API calls
(`filing`, `listing`, `comments`, `workflow.transitions`,
`attachments.storage`), with the same schemas, context factory and
permissions, so a page can do exactly what the API allows the same person.

Plain forms post and redirect (they work without JavaScript); with htmx the
list's filters, the area picker and comments swap a fragment instead.
"""

from __future__ import annotations

import datetime as dt
import uuid
from typing import Any
from urllib.parse import urlencode

import colander
from pyramid.config import Configurator
from pyramid.httpexceptions import HTTPFound, HTTPNotFound
from pyramid.i18n import TranslationStringFactory
from pyramid.request import Request

from ehs_core import refdata
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
from ehs_core.followup.services import follow_up_url, issue_code
from ehs_core.incidents import FACTORY, comments, export, filing, listing
from ehs_core.incidents.extensions import Reporter, reporter_of
from ehs_core.incidents.models import Incident, IncidentType, Severity, Status, reference
from ehs_core.incidents.resources import IncidentContext, page_factory, sees_everything
from ehs_core.incidents.schemas import CommentSchema, IncidentCreateSchema, IncidentUpdateSchema
from ehs_core.incidents.serialize import incident_json, location_and_people, shown_names
from ehs_core.security import Permission
from ehs_core.sites.services import site_choices, site_index, site_timezone
from ehs_core.sites.zones import site_zone as zone_of
from ehs_core.ui.directives import rendered_slots
from ehs_core.ui.forms import (
    BOOL,
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
    number,
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


# --- list -------------------------------------------------------------------


def filter_options(request: Request) -> dict[str, Any]:
    """The site and area filters' options as (value, label), areas grouped
    by site and named by their path (`sites.services.area_path`), in its order: plain
    tuples, so the list page does not look up each of a hundred options'
    attributes (kept per worker with the sites)."""
    sites = active_sites(request)
    areas = []
    for site in sites:
        if site["areas"]:
            areas.append((site["name"], [(str(area["id"]), area["path"]) for area in site["areas"]]))
    return {"sites": [(str(s["id"]), s["name"]) for s in sites], "areas": areas}


def filters_values(request: Request) -> dict[str, Any]:
    """What the list's filter form shows: the choices made and every option
    (the sites' and areas' kept with the reference data, `ehs_core.refdata`)."""
    return {"types": list(IncidentType), "severities": list(Severity), "statuses": list(Status),
            "filter_options": refdata.cached(request, "incident_list_filters", filter_options),
            "sort": request.GET.get("sort", "")}


def list_query_params(request: Request) -> dict[str, Any]:
    """The page's query as the API's list schema takes it: every filter
    value that was given (several values for one filter are kept), paging
    and search."""
    params: dict[str, Any] = {}
    for key in request.GET:
        values = [v for v in request.GET.getall(key) if v != ""]
        if values:
            params[key] = values if len(values) > 1 else values[0]
    return params


def incident_list(request: Request) -> dict[str, Any]:
    params = list_query_params(request)
    schema = listing.list_schema(request.registry)
    known = {node.name for node in schema.children}
    query_params = {k: v for k, v in params.items() if k in known}
    errors: dict[str, str] = {}
    try:
        query = schema.deserialize(query_params)
    except colander.Invalid as exc:
        errors = errors_of(exc)
        query = schema.deserialize({})
    # The table shows none of the sections (OSHA cases, kiosk channel...).
    page = listing.list_page(request, query, sections=False)
    sites = active_sites(request)
    # A search with more matches than it counts (listing.COUNT_BOUND) says
    # "more than N" and pages on without a last page number.
    pages = max(1, -(-page.total // page.page_size)) if page.exact else None
    base = [(k, v) for k, v in request.GET.items() if k not in ("page", "notice") and v != ""]
    incident_path = request.route_path("page.incidents") + "/"
    zones = {s["id"]: s["timezone"] for s in sites}
    names = location_and_people(request, page.items)
    return {
        "items": page.items,
        "site_names": names["site"], "area_names": names["area"], "reference": reference,
        "page": page.page, "pages": pages, "total": page.total, "page_size": page.page_size,
        "export_limit": export.MAX_ROWS,
        "total_exact": page.exact, "has_next": page.page < pages if pages else True,
        "total_text": number(page.total),
        "errors": errors, "selected": {key: request.GET.getall(key) for key in LIST_FILTERS},
        "q": request.GET.get("q", ""), "sites": sites, "zones": zones,
        # Each row's link: the page route's path, the number appended.
        "incident_path": incident_path,
        "query_string": urlencode(base),
        "page_url": lambda n: request.route_path("page.incidents", _query=[*base, ("page", n)]),
        "export_url": request.route_path("page.incidents_export", _query=[(k, v) for k, v in base if k != "q"]
                                         + ([("q", request.GET["q"])] if request.GET.get("q") else [])),
        "tools": rendered_slots(request, "ui.incident_list_tools", query_params),
    }


def incident_list_page(request: Request) -> Any:
    """The whole page, or only the results when htmx asks for them. The
    menu's plain /incidents opens on the sites the person works at (issue
    #36 item 9), as the filter a person can untick; any other address,
    "Clear filters" too, lists what the spec lets them see."""
    if not request.GET and request.identity.user is not None and request.identity.user.site_ids:
        return HTTPFound(request.route_path("page.incidents", _query=[
            ("siteId", site_id) for site_id in request.identity.user.site_ids]))
    if request.headers.get("HX-Request") == "true" and request.headers.get("HX-Target") == "results":
        request.override_renderer = "incidents/results.html"
        return incident_list(request)
    return incident_list(request) | filters_values(request)


def export_for_people(request: Request) -> Any:
    """The list's "Export these as CSV": the API's rows in people's words,
    every time in its site's zone (issue #36 item 7; `export.csv_response`)."""
    return export.csv_response(request, for_people=True)


def go_to_incident(request: Request) -> HTTPFound:
    """"Go to INC-0042": the number alone is enough."""
    raw = request.GET.get("number", "")
    digits = raw.strip().upper().removeprefix("INC-").removeprefix("INC").strip().lstrip("#")
    if digits.isdigit() and len(digits) <= 9:
        return HTTPFound(request.route_path("page.incident", number=int(digits)))
    return HTTPFound(request.route_path("page.incidents", _query={"q": raw}))


# --- detail -----------------------------------------------------------------


def detail_values(request: Request, context: IncidentContext) -> dict[str, Any]:
    incident = context.incident
    item = incident_json(request, incident, detail=True, read=context.sections)
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
        request.override_renderer = "incidents/comments.html"
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


# --- report -----------------------------------------------------------------


def form_values(request: Request, sites: list[dict[str, Any]]) -> dict[str, Any]:
    return {"sites": sites, "types": [(t, TYPE_HINTS[t]) for t in IncidentType],
            "severities": [(s, SEVERITY_HINTS[s]) for s in Severity],
            "server_zone": zone_named(None, request)}


def report_form(request: Request) -> dict[str, Any]:
    sites = active_sites(request)
    site_id = sites[0]["id"] if len(sites) == 1 else None
    now = dt.datetime.now(site_zone(request, sites, site_id)).replace(second=0, microsecond=0)
    shown = now.strftime("%Y-%m-%dT%H:%M")
    return form_values(request, sites) | {
        "values": {"clientId": str(uuid.uuid4()), "occurredAt": shown, "siteId": site_id,
                   "nowShown": shown, "nowAt": now.isoformat()}, "errors": {}}


def report(request: Request) -> Any:
    """File a report as the API does: same schema, same filing operation, a
    `clientId` from the form so that sending it twice files it once."""
    sites = active_sites(request)
    values = report_values(request, sites, FORM_FIELDS | {"anonymous": BOOL, "clientId": TEXT})
    # The thanks page is found by the clientId (see `thanks`): a form sent
    # without one gets one here.
    values["clientId"] = values.get("clientId") or str(uuid.uuid4())
    user = request.identity.user
    try:
        data = IncidentCreateSchema().deserialize(values)
        incident, created = filing.file_report(request, data)
    except (colander.Invalid, DomainError) as exc:
        request.response.status = 400
        shown = dict(request.POST.items())
        shown.pop("photos", None)
        # A browser cannot put chosen files back into a file input: say which
        # ones were not kept, so that nobody believes they were sent.
        dropped = [item.filename for item in request.POST.getall("photos") if hasattr(item, "file")]
        return form_values(request, sites) | {"values": shown, "errors": errors_of(exc),
                                              "dropped_files": dropped}
    failed = []
    if created:
        for item in request.POST.getall("photos"):
            if not hasattr(item, "file"):
                continue
            try:
                storage.save_upload(request, incident, item, None if incident.anonymous else user.id)
            except storage.Refused:
                failed.append(item.filename)
    # A report without a name gets its follow-up code, shown on this answer
    # only (the thanks page a redirect leads to cannot show it again).
    code = issue_code(request, incident) if created and incident.anonymous else None
    if failed or code:
        # The files not kept are named by this answer itself: the address
        # must not write what the page says (anyone can craft one).
        request.override_renderer = "incidents/thanks.html"
        return thanks_values(request, incident) | {
            "failed": failed, "follow_up_code": code,
            "follow_up_url": follow_up_url(request, code) if code else None}
    return HTTPFound(request.route_path("page.incident_thanks", _query={"report": incident.client_id}))


def thanks(request: Request) -> dict[str, Any]:
    """The report's reference, to who filed it only: the address names the
    report by its clientId (a random UUID the form was given), and the page
    answers as a retry of that clientId would (`filing.filed_by`: the
    reporter of a named report; any signed-in user holding the clientId of
    an anonymous one, which names no reporter); 404 otherwise, like every
    page for what the caller cannot see. By `?number=N` it told anyone
    whether N existed and whether it was anonymous."""
    try:
        client_id = str(uuid.UUID(request.GET.get("report", "")[:64]))
    except ValueError:
        raise HTTPNotFound() from None
    identity = request.identity
    incident = filing.find_by_client_id(request.dbsession, identity.account.organization_id, client_id)
    if (incident is None or incident.number is None
            or not filing.filed_by(incident, filing.user_filer(incident.anonymous, identity.user_id))):
        raise HTTPNotFound()
    return thanks_values(request, incident)


def thanks_values(request: Request, incident: Incident) -> dict[str, Any]:
    visible = sees_everything(request.identity) or incident.reporter_id == request.identity.user_id
    return {"reference": incident.reference, "number": incident.number, "visible": visible,
            "anonymous": incident.anonymous, "failed": [], "follow_up_code": None}


def area_picker(request: Request) -> dict[str, Any]:
    """The area select of the chosen site (htmx swaps it when the site changes)."""
    raw = request.GET.get("siteId", "")
    site_id = int(raw) if raw.isdigit() and len(raw) <= 9 else None
    sites = active_sites(request)
    return {"sites": [s for s in sites if s["id"] == site_id] if site_id else sites,
            "values": {"siteId": site_id, "areaId": None}, "errors": {},
            "field": request.GET.get("field") or "areaId"}


def includeme(config: Configurator) -> None:
    # The page's values, for the other packages' forms that answer with the whole page.
    config.add_request_method(detail_values, "incident_page_values")
    # The comments, a panel of the page like any other (its template draws its own section).
    config.add_incident_panel("comments", "incidents/comments.html", permission=Permission.view_incident,
                              order=1000, framed=False)
    config.add_route("page.incidents", "/incidents")
    config.add_route("page.incident_go", "/incidents/go")
    config.add_route("page.incident_new", "/incidents/new")
    config.add_route("page.incident_thanks", "/incidents/new/thanks")
    config.add_route("page.area_picker", "/incidents/areas")
    config.add_route("page.incidents_export", "/incidents/export.csv")
    config.add_route("page.incident", PAGE, factory=page_factory)
    config.add_route("page.incident_transition", PAGE + "/transition", factory=FACTORY)
    config.add_route("page.incident_edit", PAGE + "/edit", factory=FACTORY)
    config.add_route("page.incident_comments", PAGE + "/comments", factory=FACTORY)
    config.add_route("page.incident_attachments", PAGE + "/attachments", factory=FACTORY)
    view = config.add_view
    signed_in = Permission.signed_in
    view(incident_list_page, route_name="page.incidents", request_method="GET",
         renderer="incidents/list.html", permission=signed_in)
    view(go_to_incident, route_name="page.incident_go", request_method="GET", permission=signed_in)
    view(export_for_people, route_name="page.incidents_export", request_method="GET", permission=signed_in,
         query=listing.list_schema)
    view(report_form, route_name="page.incident_new", request_method="GET",
         renderer="incidents/new.html", permission=signed_in)
    view(report, route_name="page.incident_new", request_method="POST",
         renderer="incidents/new.html", permission=signed_in)
    view(thanks, route_name="page.incident_thanks", request_method="GET",
         renderer="incidents/thanks.html", permission=signed_in)
    view(area_picker, route_name="page.area_picker", request_method="GET",
         renderer="incidents/area_select.html", permission=signed_in)
    view(incident_detail, route_name="page.incident", request_method="GET",
         renderer="incidents/detail.html", permission=Permission.view_incident)
    view(transition, route_name="page.incident_transition", request_method="POST",
         renderer="incidents/detail.html", permission=Permission.view_incident)
    view(edit_form, route_name="page.incident_edit", request_method="GET",
         renderer="incidents/edit.html", permission=Permission.update_incident)
    view(edit, route_name="page.incident_edit", request_method="POST",
         renderer="incidents/edit.html", permission=Permission.update_incident)
    view(add_comment, route_name="page.incident_comments", request_method="POST",
         renderer="incidents/detail.html", permission=Permission.comment_incident)
    view(upload, route_name="page.incident_attachments", request_method="POST",
         renderer="incidents/detail.html", permission=Permission.upload_attachment)
    config.add_nav_item("incidents", "Incidents", "page.incidents", permission=signed_in, order=20)
    config.add_nav_item("report", "Report", "page.incident_new", permission=signed_in, order=30)
