"""Case numbers, classification, direct-report deadlines and what Form 301
and the electronic submission still need."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any, NamedTuple

from babel.dates import format_datetime

from ehs_core.db import utcnow
from ehs_core.incidents.models import Incident, reference
from ehs_core.serialize import iso
from ehs_plugins.osha import bodyparts, dates, days, deadlines
from ehs_plugins.osha.models import InjuryCase
from ehs_plugins.osha.recordability import COVERED, Answers, Outcome, classify
from ehs_plugins.osha.schemas import CASE_FIELDS

# 1904.39(a): report a fatality within 8 hours (if death occurs within 30
# days of the incident) and an in-patient hospitalization, amputation or
# loss of an eye within 24 hours.
FATALITY_HOURS = 8
SEVERE_INJURY_HOURS = 24
FATALITY_WINDOW = dt.timedelta(days=30)


class LoggedCase:
    """A case as the 300 Log, the ITA file and the forms read it: its
    columns as plain attributes (but its bookkeeping times, `log.UNLOGGED`),
    read-only, outside the ORM session. A log of a thousand cases reads some
    forty thousand attributes; an ORM attribute costs about ten plain ones,
    and so does building the entity. `log.load` adds the case number and
    the log's columns E and F (`case_number`, `where`, `description`)."""

    def __init__(self, columns: dict[str, Any]) -> None:
        self.__dict__.update(columns)


class LoggedIncident(NamedTuple):
    """What the log and the forms read of a case's incident (a tuple: made
    once per incident of a site-year, a thousand times per log)."""

    id: int
    number: int
    site_id: int
    area_id: int | None
    location_detail: str | None
    title: str
    area_name: str | None
    occurred_at: dt.datetime
    # `occurred_at` on the establishment's clock (see `log.load`).
    local: dt.datetime

    @property
    def reference(self) -> str:
        return reference(self.number)


def case_number(incident: Incident | LoggedIncident, case: InjuryCase | LoggedCase) -> str:
    return incident.reference if case.sequence == 1 else f"{incident.reference}-{case.sequence}"


def answers(case: InjuryCase) -> Answers:
    return Answers(
        employment_type=case.employment_type, work_related=case.work_related, new_case=case.new_case,
        died=case.died, days_away_from_work=case.days_away_from_work, days_away=case.days_away or 0,
        restricted_or_transfer=case.restricted_or_transfer, days_restricted=case.days_restricted or 0,
        medical_treatment=case.medical_treatment, loss_of_consciousness=case.loss_of_consciousness,
        significant_diagnosis=case.significant_diagnosis, special_case=case.special_case,
        case_type=case.case_type, privacy_case=case.privacy_case,
    )


def recalculate(case: InjuryCase) -> None:
    result = classify(answers(case))
    case.recordable = result.recordable
    case.outcome = result.outcome.value if result.outcome else None
    case.effective_case_type = result.case_type.value if result.case_type else None
    case.effective_privacy = result.privacy
    # Kept with the decision, from the same answers: home counts the cases
    # missing fields through a partial index on it (issue #42 item 2).
    case.incomplete = bool(missing_fields(case))


@dataclass(frozen=True)
class SevereDeadline:
    """A direct report owed to OSHA (1904.39(a)): by when, within how many
    hours of the event, why, and whether that moment had already passed when
    the severe answer was first entered on the case."""

    due: dt.datetime
    hours: int
    reasons: list[str]
    entered_at: dt.datetime

    @property
    def past_due_when_entered(self) -> bool:
        return self.entered_at > self.due


def severe_deadline(case: InjuryCase, incident: Incident, zone: dt.tzinfo) -> SevereDeadline | None:
    """The direct report still owed to OSHA, or None (none needed, or done);
    a day of death starts at midnight on the establishment's clock (`zone`)."""
    # 1904.39(a) concerns the employer's own (covered) employees.
    if case.reported_to_osha_at is not None or case.work_related is False \
            or case.employment_type not in COVERED:
        return None
    deadlines: list[tuple[dt.datetime, int, str]] = []
    # 1904.39(b)(7)-(8): when the employer learned of the event (or that it
    # was work-related) later, the clocks run from that moment.
    learned = case.learned_at if getattr(case, "learned_at", None) is not None else incident.occurred_at
    if case.died:
        # 1904.39(a)(1): within 8 hours of a death within 30 days of the incident.
        died_at = incident.occurred_at
        if case.date_of_death is not None:
            died_at = max(died_at, dt.datetime.combine(case.date_of_death, dt.time(), zone))
        if died_at - incident.occurred_at <= FATALITY_WINDOW:
            start = max(died_at, learned)
            deadlines.append((start + dt.timedelta(hours=FATALITY_HOURS), FATALITY_HOURS, "fatality"))
    # 1904.39(a)(2): within 24 hours of an in-patient hospitalization, amputation or loss of an eye.
    for flag, reason in ((case.inpatient_hospitalization, "in-patient hospitalization"),
                         (case.amputation, "amputation"), (case.loss_of_eye, "loss of an eye")):
        if flag:
            start = max(incident.occurred_at, learned)
            deadlines.append((start + dt.timedelta(hours=SEVERE_INJURY_HOURS), SEVERE_INJURY_HOURS, reason))
    if not deadlines:
        return None
    due, hours, _ = min(deadlines)
    # The notice goes out when a severe answer is first entered; until then, it is being entered now.
    entered_at = case.severe_notice_sent_at or utcnow()
    return SevereDeadline(due, hours, [reason for _, _, reason in deadlines], entered_at)


def severe_report(case: InjuryCase, incident: Incident, zone: dt.tzinfo) -> dict[str, Any] | None:
    """`severeReport` of a case: times on the establishment's clock (`zone`)."""
    deadline = severe_deadline(case, incident, zone)
    if deadline is None:
        return None
    return {"withinHours": deadline.hours, "reasons": deadline.reasons,
            "dueBy": deadline.due.astimezone(zone).isoformat(),
            "enteredAt": deadline.entered_at.astimezone(zone).isoformat(),
            "pastDueWhenEntered": deadline.past_due_when_entered}


def undecided(case: InjuryCase | LoggedCase) -> bool:
    """Whether recordability still waits on an answer: a covered worker's
    case whose work-relatedness (1904.5) or newness (1904.6) is not decided."""
    return case.employment_type in COVERED and (case.work_related is None or case.new_case is None)


def record_by(case: InjuryCase | LoggedCase, incident: Incident) -> dt.datetime | None:
    """1904.29(b)(3): a recordable case is entered within 7 calendar days of
    receiving the information that it occurred (from `learned_at` when the
    employer learned later). Shown while the case is undecided, else None."""
    if not undecided(case):
        return None
    learned = getattr(case, "learned_at", None)
    return deadlines.recording_due(max(incident.occurred_at, learned) if learned else incident.occurred_at)


def wall_clock(moment: dt.datetime, zone: dt.tzinfo) -> str:
    """A moment as people at the establishment read it: "1 Jan 2026, 22:00 EST
    (America/New_York)", the pages' form (ui.rendering.when) with the zone's name."""
    local = moment.astimezone(zone)
    name = getattr(zone, "key", None)
    return format_datetime(local, "d MMM y, HH:mm", locale="en") + f" {local.tzname()}" + (
        f" ({name})" if name else "")


# What Form 301 and the ITA case data need of every recordable case.
REQUIRED_FIELDS = ("jobTitle", "employeeAddress", "dateOfBirth", "dateOfHire", "sex", "timeStartedWork",
                   "activityBefore", "whatHappened", "natureOfInjury", "bodyPart", "objectSubstance",
                   "treatedInEmergencyRoom")


def missing_fields(case: InjuryCase | LoggedCase) -> list[str]:
    """Fields Form 301 and the ITA case data still need (recordable cases)."""
    if not case.recordable:
        return []
    missing = [name for name in REQUIRED_FIELDS if getattr(case, CASE_FIELDS[name][0]) in (None, "")
               and not (name == "bodyPart" and bodyparts.words(case))]
    if case.effective_case_type is None:
        missing.append("caseType")
    if case.died and case.date_of_death is None:
        missing.append("dateOfDeath")
    if case.outcome == Outcome.days_away and not case.days_away:
        missing.append("daysAway")
    if case.outcome == Outcome.restricted and not case.days_restricted:
        missing.append("daysRestricted")
    return missing


def numbered(incident_number: int, sequence: int) -> str:
    """A case's number from its incident's number and its sequence (`case_number`)."""
    return reference(incident_number) if sequence == 1 else f"{reference(incident_number)}-{sequence}"


def case_json(case: InjuryCase, incident: Incident, zone: dt.tzinfo) -> dict[str, Any]:
    body: dict[str, Any] = {"id": case.id, "incidentNumber": incident.number,
                            "caseNumber": case_number(incident, case), "name": case.name,
                            "personId": case.person_id}
    for name, (column, _, _) in CASE_FIELDS.items():
        value = getattr(case, column)
        body[name] = iso(value) if isinstance(value, dt.date | dt.datetime) else value
    body["caseType"] = case.effective_case_type
    body["privacyCase"] = case.effective_privacy
    body["recordable"] = case.recordable
    body["outcome"] = case.outcome
    # Why: the rules of 1904 behind recordable, outcome and caseType (additive field).
    body["reasoning"] = classify(answers(case)).explanation.json()
    periods = days.parse(case.periods)
    body["periods"] = [period.json() for period in periods]
    if days.is_open(periods):  # an open period counts up to today (1904.7(b)(3)(ii))
        body["daysAway"], body["daysRestricted"] = days.count_days(
            periods, incident.occurred_at.astimezone(zone).date(), utcnow().astimezone(zone).date())
    body["severeReport"] = severe_report(case, incident, zone)
    due = record_by(case, incident)
    body["recordBy"] = due.astimezone(zone).isoformat() if due is not None else None
    body["dateWarnings"] = dates.unusual(case, incident.occurred_at, zone)
    body["missingFields"] = missing_fields(case)
    body["createdAt"] = iso(case.created_at)
    body["updatedAt"] = iso(case.updated_at)
    return body


def _date(value: dt.date | None) -> str | None:
    return value.isoformat() if value is not None else None


def form_301_json(case: InjuryCase | LoggedCase, incident: Incident | LoggedIncident,
                  zone: dt.tzinfo) -> dict[str, Any]:
    """The data of OSHA Form 301 (Injury and Illness Incident Report), in
    the form's order; the event on the establishment's clock (`zone`)."""
    occurred = incident.occurred_at.astimezone(zone)
    return {
        "caseNumber": case_number(incident, case),
        "employee": {"name": case.name, "address": case.employee_address,
                     "dateOfBirth": _date(case.date_of_birth), "dateOfHire": _date(case.date_of_hire),
                     "sex": case.sex, "jobTitle": case.job_title},
        "physician": {"name": case.physician_name, "facility": case.treatment_facility,
                      "treatedInEmergencyRoom": case.treated_in_emergency_room,
                      "hospitalizedOvernight": case.inpatient_hospitalization},
        "case": {"dateOfInjury": occurred.date().isoformat(), "timeEmployeeBeganWork": case.time_started_work,
                 # Item 13: blank, with "time cannot be determined" checked, when unknown.
                 "timeOfEvent": None if case.time_unknown else occurred.strftime("%H:%M"),
                 "timeUnknown": bool(case.time_unknown), "activityBefore": case.activity_before,
                 "whatHappened": case.what_happened, "injuryOrIllness": case.nature_of_injury,
                 "bodyPart": bodyparts.words(case), "bodyPartCode": getattr(case, "body_part_code", None),
                 "objectOrSubstance": case.object_substance,
                 "dateOfDeath": _date(case.date_of_death)},
        "recordable": case.recordable, "outcome": case.outcome, "caseType": case.effective_case_type,
        "privacyCase": case.effective_privacy,
        # Form 301 "Completed by / Title / Phone / Date".
        "preparer": {"name": case.preparer_name, "title": case.preparer_title, "phone": case.preparer_phone,
                     "date": _date(case.prepared_at)},
    }
