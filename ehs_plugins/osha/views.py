"""Injury and illness cases; every endpoint needs safety_manager."""

from __future__ import annotations

from typing import Any

from pyramid.authorization import Allow
from pyramid.httpexceptions import HTTPNoContent
from pyramid.request import Request
from pyramid.view import view_config
from sqlalchemy import func, select

from ehs_core.db import utcnow
from ehs_core.errors import APIError
from ehs_core.incidents.models import Incident
from ehs_core.mail import send_mail
from ehs_core.security import Role, role_principal
from ehs_core.users.models import User
from ehs_plugins.osha.cases import (
    case_json,
    case_number,
    incident_zone,
    recalculate,
    severe_deadline,
    wall_clock,
)
from ehs_plugins.osha.models import InjuryCase
from ehs_plugins.osha.recordability import MAX_DAYS
from ehs_plugins.osha.schemas import CASE_FIELDS, case_create_schema, case_update_schema
from ehs_plugins.osha.trail import decision, record_decision

MANAGE = "osha.manage"
# What a case answer holds beyond the fields sent (for the OpenAPI document).
CASE_ANSWER = (
    "A case answer adds to its fields: recordable, outcome, caseType and privacyCase as computed; "
    "severeReport ({withinHours, reasons, dueBy, enteredAt, pastDueWhenEntered}, times on the "
    "establishment's clock) when a direct report to OSHA is owed; missingFields; and reasoning "
    "({recordable, outcome, caseType: [{rule, paragraph, text}], missing, wouldChange: "
    "[{fields, paragraph, text}]}), the rules of 29 CFR 1904 behind the decision.")
# Incident types that by definition hurt no one (29 CFR 1904.4: a case is an
# injury or illness); property damage or a spill may still have hurt someone.
NO_ONE_HURT = ("near_miss", "hazard")


class OshaRoot:
    __acl__ = [(Allow, role_principal(Role.safety_manager), MANAGE)]

    def __init__(self, request: Request) -> None:
        self.request = request


def load_incident(request: Request, lock: bool = False) -> Incident:
    query = select(Incident).where(
        Incident.organization_id == request.identity.user.organization_id,
        Incident.number == int(request.matchdict["number"]))
    if lock:
        query = query.with_for_update()
    incident = request.dbsession.execute(query).scalar()
    if incident is None:
        raise APIError(404, "Not found")
    return incident


def load_case(request: Request) -> tuple[InjuryCase, Incident]:
    case = request.dbsession.get(InjuryCase, int(request.matchdict["id"]))
    if case is None:
        raise APIError(404, "Not found")
    incident = request.dbsession.get(Incident, case.incident_id)
    if incident is None or incident.organization_id != request.identity.user.organization_id:
        raise APIError(404, "Not found")
    return case, incident


def apply_answers(case: InjuryCase, data: dict[str, Any]) -> None:
    if "name" in data:
        case.name = data["name"]
    for name, (column, _, _) in CASE_FIELDS.items():
        if name in data:
            setattr(case, column, data[name])
    if (case.days_away or 0) + (case.days_restricted or 0) > MAX_DAYS:
        # 29 CFR 1904.7(b)(3)(vii)
        raise APIError(400, "Invalid request", [
            {"path": "daysAway", "message": f"Days away plus days restricted must not exceed {MAX_DAYS}"}])
    if case.date_of_death is not None and not case.died:
        raise APIError(400, "Invalid request", [{"path": "dateOfDeath", "message": "Only for a death"}])
    recalculate(case)
    case.updated_at = utcnow()


def zone_of(request: Request, incident: Incident) -> Any:
    return incident_zone(request.dbsession, request.registry, incident)


def notify_if_newly_severe(request: Request, case: InjuryCase, incident: Incident) -> None:
    """Tell safety managers and admins once that a direct report is owed,
    and whether its deadline had already passed (1904.39(a))."""
    zone = zone_of(request, incident)
    deadline = severe_deadline(case, incident, zone)
    if deadline is None or case.severe_notice_sent_at is not None:
        return
    case.severe_notice_sent_at = deadline.entered_at
    late, status = "", f"due within {deadline.hours} hours"
    if deadline.past_due_when_entered:
        status = f"overdue (due within {deadline.hours} hours)"
        entered = wall_clock(deadline.entered_at, zone)
        late = (f"The deadline had already passed when this was entered ({entered}): report now,"
                " and note when and how the establishment learned of the event.\n")
    recipients = request.dbsession.execute(select(User.email).where(
        User.active.is_(True), User.role.in_((Role.safety_manager, Role.admin)))).scalars()
    for email in recipients:
        send_mail(request, email, "osha_severe_report", reference=case_number(incident, case),
                  number=incident.number, status=status, reasons=", ".join(deadline.reasons),
                  due=wall_clock(deadline.due, zone), late=late)


@view_config(route_name="osha.incident_cases", request_method="GET", renderer="json", permission=MANAGE,
             summary="The incident's cases. " + CASE_ANSWER)
def list_cases(request: Request) -> list[dict[str, Any]]:
    incident = load_incident(request)
    cases = request.dbsession.execute(select(InjuryCase).where(
        InjuryCase.incident_id == incident.id).order_by(InjuryCase.sequence)).scalars()
    zone = zone_of(request, incident)
    return [case_json(case, incident, zone) for case in cases]


@view_config(route_name="osha.incident_cases", request_method="POST", renderer="json", permission=MANAGE,
             body=case_create_schema, responses=(201,), summary="Add a case. " + CASE_ANSWER)
def create_case(request: Request) -> dict[str, Any]:
    data = request.validated
    incident = load_incident(request, lock=True)  # serialises case numbering per incident
    if incident.type in NO_ONE_HURT:
        raise APIError(409, f"A {incident.type.replace('_', ' ')} hurt no one, so it has no injury or "
                       "illness case; change the incident's type first if someone was hurt")
    last = request.dbsession.execute(select(func.max(InjuryCase.sequence)).where(
        InjuryCase.incident_id == incident.id)).scalar()
    case = InjuryCase(incident_id=incident.id, sequence=(last or 0) + 1, created_at=utcnow(),
                      employment_type="employee", died=False, days_away_from_work=False, days_away=0,
                      restricted_or_transfer=False, days_restricted=0, medical_treatment=False,
                      loss_of_consciousness=False, significant_diagnosis=False, special_case="none",
                      privacy_case=False, inpatient_hospitalization=False, amputation=False,
                      loss_of_eye=False)
    if "caseType" not in data and incident.type in ("injury", "illness"):
        data["caseType"] = "injury" if incident.type == "injury" else "other_illness"
    apply_answers(case, data)
    request.dbsession.add(case)
    request.dbsession.flush()
    record_decision(request, case, incident, None)
    notify_if_newly_severe(request, case, incident)
    request.response.status = 201
    return case_json(case, incident, zone_of(request, incident))


@view_config(route_name="osha.case", request_method="PATCH", renderer="json", permission=MANAGE,
             body=case_update_schema, summary="Change a case; the decision is recalculated. " + CASE_ANSWER)
def update_case(request: Request) -> dict[str, Any]:
    data = request.validated
    case, incident = load_case(request)
    before = decision(case)
    apply_answers(case, data)
    record_decision(request, case, incident, before)
    notify_if_newly_severe(request, case, incident)
    return case_json(case, incident, zone_of(request, incident))


@view_config(route_name="osha.case", request_method="DELETE", permission=MANAGE,
             responses=(204,))
def delete_case(request: Request) -> HTTPNoContent:
    case, _ = load_case(request)
    request.dbsession.delete(case)
    return HTTPNoContent()


def _date(value: Any) -> str | None:
    return value.isoformat() if value is not None else None


@view_config(route_name="osha.case_301", request_method="GET", renderer="json", permission=MANAGE)
def form_301(request: Request) -> dict[str, Any]:
    """The data of OSHA Form 301 (Injury and Illness Incident Report)."""
    case, incident = load_case(request)
    occurred = incident.occurred_at.astimezone(zone_of(request, incident))
    return {
        "caseNumber": case_number(incident, case),
        "employee": {"name": case.name, "address": case.employee_address,
                     "dateOfBirth": _date(case.date_of_birth), "dateOfHire": _date(case.date_of_hire),
                     "sex": case.sex, "jobTitle": case.job_title},
        "physician": {"name": case.physician_name, "facility": case.treatment_facility,
                      "treatedInEmergencyRoom": case.treated_in_emergency_room,
                      "hospitalizedOvernight": case.inpatient_hospitalization},
        "case": {"dateOfInjury": occurred.date().isoformat(), "timeEmployeeBeganWork": case.time_started_work,
                 "timeOfEvent": occurred.strftime("%H:%M"), "activityBefore": case.activity_before,
                 "whatHappened": case.what_happened, "injuryOrIllness": case.nature_of_injury,
                 "bodyPart": case.body_part, "objectOrSubstance": case.object_substance,
                 "dateOfDeath": _date(case.date_of_death)},
        "recordable": case.recordable, "outcome": case.outcome, "caseType": case.effective_case_type,
        "privacyCase": case.effective_privacy,
    }


def injured_count(request: Request, incidents: list[Incident]) -> dict[int, int]:
    """The only case figure shown to everyone who may see the incident."""
    ids = [i.id for i in incidents]
    counts = dict(request.dbsession.execute(
        select(InjuryCase.incident_id, func.count()).where(InjuryCase.incident_id.in_(ids))
        .group_by(InjuryCase.incident_id)).all())
    return {i: counts.get(i, 0) for i in ids}


