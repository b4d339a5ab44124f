"""Cases on the incident: a panel on the incident page (the injured count
for everyone who may see the incident, the cases themselves for safety
managers, as in the API) and the case form, whose decision (recordable,
outcome, type, with the rules of 29 CFR 1904 behind it) is recalculated as
the answers change, without saving, by the same `classify` the API uses."""

from __future__ import annotations

import datetime as dt
from typing import Any

import colander
from pyramid.config import Configurator
from pyramid.httpexceptions import HTTPFound
from pyramid.request import Request

from ehs_core.errors import DomainError
from ehs_core.incidents.models import Incident
from ehs_core.security import Permission
from ehs_core.sites.models import Site
from ehs_core.ui.directives import panel_read
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
from ehs_core.ui.paths import path_maker, route_path
from ehs_plugins.osha import bodyparts, days, services
from ehs_plugins.osha.cases import (
    LoggedCase,
    answers,
    case_number,
    missing_fields,
    record_by,
    severe_deadline,
)
from ehs_plugins.osha.models import InjuryCase
from ehs_plugins.osha.pages import ROOT, TEMPLATES, labels
from ehs_plugins.osha.recordability import CaseType, EmploymentType, SpecialCase, classify
from ehs_plugins.osha.schemas import CASE_FIELDS, case_create_schema, case_update_schema
from ehs_plugins.osha.views import MANAGE, OshaRoot

CASE_PAGE = r"/osha/cases/{id:\d{1,9}}"
PANEL = "osha_cases"
TRI_STATE = "tri"  # yes / no / not decided yet
# How each answer comes from the form.
FORM = {
    "name": TEXT, "jobTitle": OPTIONAL_TEXT, "employmentType": TEXT, "workRelated": TRI_STATE,
    "newCase": TRI_STATE, "died": BOOL, "dateOfDeath": OPTIONAL_TEXT, "daysAwayFromWork": BOOL,
    "daysAway": INT, "restrictedOrTransfer": BOOL, "daysRestricted": INT, "medicalTreatment": BOOL,
    "lossOfConsciousness": BOOL, "significantDiagnosis": BOOL, "specialCase": TEXT,
    "caseType": OPTIONAL_TEXT, "privacyCase": BOOL, "inpatientHospitalization": BOOL, "amputation": BOOL,
    "lossOfEye": BOOL, "reportedToOshaAt": OPTIONAL_TEXT, "employeeAddress": OPTIONAL_TEXT,
    "dateOfBirth": OPTIONAL_TEXT, "dateOfHire": OPTIONAL_TEXT, "sex": OPTIONAL_TEXT,
    "physicianName": OPTIONAL_TEXT, "treatmentFacility": OPTIONAL_TEXT, "treatedInEmergencyRoom": TRI_STATE,
    "timeStartedWork": OPTIONAL_TEXT, "activityBefore": OPTIONAL_TEXT, "whatHappened": OPTIONAL_TEXT,
    "natureOfInjury": OPTIONAL_TEXT, "bodyPart": OPTIONAL_TEXT, "bodyPartCode": OPTIONAL_TEXT,
    "objectSubstance": OPTIONAL_TEXT,
    "timeUnknown": BOOL, "learnedAt": OPTIONAL_TEXT, "preparerName": OPTIONAL_TEXT,
    "preparerTitle": OPTIONAL_TEXT, "preparerPhone": OPTIONAL_TEXT, "preparedAt": OPTIONAL_TEXT,
}
NO_ONE_HURT = services.NO_ONE_HURT
# Names of the answers, for the links to what is missing.
FIELD_LABELS = {
    "jobTitle": "Job title", "employeeAddress": "Employee's address", "dateOfBirth": "Date of birth",
    "dateOfHire": "Date hired", "sex": "Sex", "timeStartedWork": "Time the employee began work",
    "activityBefore": "What the employee was doing just before", "whatHappened": "What happened",
    "natureOfInjury": "The injury or illness", "bodyPart": "Part of the body affected",
    "bodyPartCode": "Part of the body (OIICS code)",
    "objectSubstance": "Object or substance", "treatedInEmergencyRoom": "Treated in an emergency room",
    "caseType": "Injury or kind of illness (column M)", "dateOfDeath": "Date of death",
    "daysAway": "Days away (column K)", "daysRestricted": "Days restricted (column L)",
}


def may_manage(request: Request) -> bool:
    """The API's rule: case records are for safety managers (and admins)."""
    return bool(request.has_permission(MANAGE, OshaRoot(request)))


def site_of(request: Request, incident: Incident) -> Site | None:
    return request.dbsession.get(Site, incident.site_id)


def case_summary(request: Request, case: InjuryCase | LoggedCase, incident: Incident,
                 zone: dt.tzinfo) -> dict[str, Any]:
    """What the panel and the case page show of a decision."""
    deadline = severe_deadline(case, incident, zone)
    due = record_by(case, incident)
    now = dt.datetime.now(dt.UTC)
    return {"case": case, "number": case_number(incident, case),
            "classification": classify(answers(case)), "missing": missing_fields(case),
            "deadline": deadline, "overdue": deadline is not None and deadline.due < now,
            "record_by": due, "record_overdue": due is not None and due < now}


def cases_panel(request: Request, context: Any) -> dict[str, Any] | None:
    """The panel's variables: the count for everyone, the cases for those who may keep them."""
    incident = context.incident
    # The detail's `injuredCount` counted them already (no statement).
    count = services.counts_of(request, [incident])[incident.id]
    if not count and incident.type in NO_ONE_HURT:
        return None  # for everyone: nobody hurt, no case (asked before the permission)
    if not may_manage(request):
        return {"manage": False, "count": count}
    read = panel_read(context, PANEL)
    cases = services.cases_to_show(request, incident, read) if count else []
    if not cases and incident.type in NO_ONE_HURT:
        return None
    zone = services.zone_of(request, incident)
    # The links, made here rather than by `request.route_path` in the
    # template (each call there works out a query, an anchor and a host).
    case_path = path_maker(request, "page.osha_case")
    return {"manage": True, "count": len(cases), "incident": incident, **labels(request),
            "summaries": [case_summary(request, case, incident, zone) | {"path": case_path(id=case.id)}
                          for case in cases],
            "add_path": route_path(request, "page.osha_case_add", number=incident.number),
            "error": case_error(request)}


# What a refused "Add an injured or ill person" is told by, in the address
# after the redirect: a key the panel's template turns into the plugin's own
# words (cases_panel.html). The address names which message, never writes
# it (anyone can craft one).
CASE_ERRORS = ("name", "no-one-hurt", "person-has-case", "refused")


def case_error(request: Request) -> str | None:
    error = request.GET.get("case_error")
    return None if not error else error if error in CASE_ERRORS else "refused"


def add_case(request: Request) -> HTTPFound:
    """"Add an injured or ill person": the case is created with the name,
    then answered on its own page."""
    number = int(request.matchdict["number"])
    try:
        data = case_create_schema(request.registry).deserialize(
            json_values(request.POST, {"name": TEXT, "personId": OPTIONAL_INT}))
        case, _ = services.create_case(request, number, data)
    except colander.Invalid:
        return HTTPFound(request.route_path("page.incident", number=number,
                                            _query={"case_error": "name"}, _anchor="panel-osha_cases"))
    except DomainError as exc:
        if exc.status == 404:
            raise
        if exc.status == 409:  # hurt no one, or the person already has their case
            error = "person-has-case" if exc.issues and exc.issues[0]["path"] == "personId" else "no-one-hurt"
        else:
            error = "refused"
        return HTTPFound(request.route_path("page.incident", number=number, _query={"case_error": error},
                                            _anchor="panel-osha_cases"))
    return HTTPFound(request.route_path("page.osha_case", id=case.id, _query={"notice": "saved"}))


# --- the case form --------------------------------------------------------


# Blank rows offered below a case's periods, to add one.
NEW_PERIOD_ROWS = 2
PERIOD_MARK = "periods-shown"


def posted_periods(post: Any) -> list[dict[str, Any]]:
    """The periods rows of the form (periods-N-kind, -from, -to); a row with
    neither kind nor start is an unused blank row."""
    rows = []
    index = 0
    while f"periods-{index}-kind" in post and index < 60:
        kind, start, end = (str(post.get(f"periods-{index}-{part}") or "").strip()
                            for part in ("kind", "from", "to"))
        if kind or start:
            rows.append({"kind": kind, "from": start, "to": end or None})
        index += 1
    return rows


def form_values(case: InjuryCase, zone: dt.tzinfo) -> dict[str, Any]:
    """The stored answers as the form shows them."""
    values: dict[str, Any] = {"name": case.name,
                              "periods": [period.json() for period in days.parse(case.periods)]}
    for name, (column, _, _) in CASE_FIELDS.items():
        value = getattr(case, column)
        if FORM.get(name) == TRI_STATE:
            value = "" if value is None else ("yes" if value else "no")
        elif isinstance(value, dt.datetime):
            value = value.astimezone(zone).strftime("%Y-%m-%dT%H:%M")
        elif isinstance(value, dt.date):
            value = value.isoformat()
        values[name] = value
    return values


def posted_answers(request: Request, zone: dt.tzinfo) -> dict[str, Any]:
    """The form as the JSON body the API would receive."""
    post = request.POST
    plain = {name: kind for name, kind in FORM.items() if kind != TRI_STATE}
    data = json_values(post, plain)
    for name, kind in FORM.items():
        if kind == TRI_STATE and name in post:
            data[name] = {"yes": True, "no": False}.get(post.get(name), None)
    for name in ("daysAway", "daysRestricted"):
        if data.get(name) == "":
            data[name] = 0  # an empty count is none
    for name in ("reportedToOshaAt", "learnedAt"):
        if data.get(name):
            data[name] = local_to_iso(data[name], zone)
    if PERIOD_MARK in post:
        data["periods"] = posted_periods(post)
        if data["periods"]:  # the days are counted from the periods (1904.7(b)(3)-(4))
            for name in ("daysAway", "daysRestricted"):
                data.pop(name, None)
    return data


def shown_values(request: Request) -> dict[str, Any]:
    """What was posted, shown back as it was typed."""
    values: dict[str, Any] = {name: request.POST.get(name) for name in FORM if name in request.POST}
    values["periods"] = posted_periods(request.POST)
    for name, kind in FORM.items():
        if kind == BOOL:
            values[name] = request.POST.get(name) in ("on", "true", "1", "yes")
    return values


def case_page_values(request: Request, case: InjuryCase, incident: Incident,
                     values: dict[str, Any] | None = None, errors: dict[str, str] | None = None,
                     shown: InjuryCase | None = None) -> dict[str, Any]:
    zone = services.zone_of(request, incident)
    site = site_of(request, incident)
    return {"incident": incident, "case": case, "site": site, "zone": site.timezone if site else None,
            "values": values if values is not None else form_values(case, zone),
            "errors": errors or {}, "summary": case_summary(request, shown or case, incident, zone),
            "employment_types": list(EmploymentType), "special_cases": list(SpecialCase),
            "case_types": list(CaseType), **labels(request), "new_period_rows": NEW_PERIOD_ROWS,
            "body_groups": bodyparts.grouped(request),
            "body_titles": {code: bodyparts.title(request, code) for code in bodyparts.CODES},
            "field_labels": {k: request.localizer.translate(v, domain="ehs_osha")
                             for k, v in FIELD_LABELS.items()}}


def case_page(request: Request) -> dict[str, Any]:
    case, incident = services.load_case(request, int(request.matchdict["id"]))
    return case_page_values(request, case, incident)


def save_case(request: Request) -> Any:
    case, incident = services.load_case(request, int(request.matchdict["id"]))
    zone = services.zone_of(request, incident)
    try:
        data = case_update_schema(request.registry).deserialize(posted_answers(request, zone))
        untouched_words(case, data)
        services.apply_answers(draft_of(case), data, incident, zone)  # refused before the case is touched
        services.update_case(request, case, incident, data)
    except (colander.Invalid, DomainError) as exc:
        if isinstance(exc, DomainError) and exc.status == 404:
            raise
        request.response.status = 400
        request.tm.doom()  # a refused form changes nothing
        return case_page_values(request, case, incident, shown_values(request), errors_of(exc))
    return HTTPFound(request.route_path("page.osha_case", id=case.id, _query={"notice": "saved"}))


def untouched_words(case: InjuryCase, data: dict[str, Any]) -> None:
    """The form always posts the part of body's words; words left as they
    were are not an answer of their own, so a new code prefills them as the
    API does (`bodyparts.prefill`)."""
    if "bodyPart" in data and (data["bodyPart"] or None) == (case.body_part or None):
        del data["bodyPart"]


def draft_of(case: InjuryCase) -> InjuryCase:
    """A copy of the case that is never added to the session."""
    return InjuryCase(**{c.key: getattr(case, c.key) for c in InjuryCase.__table__.columns})


def decision_preview(request: Request) -> dict[str, Any]:
    """The decision the answers on the form would give, nothing saved: the
    answers go on a draft copy of the case."""
    case, incident = services.load_case(request, int(request.matchdict["id"]))
    zone = services.zone_of(request, incident)
    draft = draft_of(case)
    errors: dict[str, str] = {}
    try:
        data = case_update_schema(request.registry).deserialize(posted_answers(request, zone))
        services.apply_answers(draft, data, incident, zone)
    except (colander.Invalid, DomainError) as exc:
        errors = errors_of(exc)
        draft = case
    values = case_page_values(request, case, incident, shown=draft)
    return {**values, "errors": errors, "preview": True}


def person_case(request: Request, context: Any, person: Any) -> dict[str, Any] | None:
    """On the people panel, an injured person's row: "Start an injury case"
    with their name filled in (the case keeps `personId`: one case per
    injured person), or the way to the case they have. For safety managers
    only, on an incident that may have hurt someone."""
    incident = context.incident
    if person.involvement != "injured" or incident.type in NO_ONE_HURT or not may_manage(request):
        return None
    translate = request.localizer.translate
    # The cases the page read with the incident for the cases panel.
    cases = services.cases_to_show(request, incident, panel_read(context, PANEL))
    case = next((c for c in cases if c.person_id == person.id), None)
    if case is not None:
        return {"label": translate("Open the injury case", domain="ehs_osha"),
                "href": route_path(request, "page.osha_case", id=case.id)}
    return {"label": translate("Start an injury case", domain="ehs_osha"),
            "path": route_path(request, "page.osha_case_add", number=incident.number),
            "fields": {"name": person.name, "personId": person.id}}


def includeme(config: Configurator) -> None:
    config.add_person_action("osha_case", person_case)
    config.add_incident_panel(PANEL, TEMPLATES + "cases_panel.html", cases_panel,
                              permission=Permission.view_incident, order=50, read=services.cases_column)
    config.add_route("page.osha_case_add", r"/incidents/{number:\d{1,9}}/cases", factory=ROOT)
    config.add_route("page.osha_case", CASE_PAGE, factory=ROOT)
    config.add_route("page.osha_case_decision", CASE_PAGE + "/decision", factory=ROOT)
    config.add_view(add_case, route_name="page.osha_case_add", request_method="POST", permission=MANAGE)
    config.add_view(case_page, route_name="page.osha_case", request_method="GET",
                    renderer=TEMPLATES + "case.html", permission=MANAGE)
    config.add_view(save_case, route_name="page.osha_case", request_method="POST",
                    renderer=TEMPLATES + "case.html", permission=MANAGE)
    config.add_view(decision_preview, route_name="page.osha_case_decision", request_method="POST",
                    renderer=TEMPLATES + "decision.html", permission=MANAGE)
