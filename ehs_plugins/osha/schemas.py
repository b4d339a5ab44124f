from __future__ import annotations

import re
from enum import StrEnum
from typing import Any

import colander

from ehs_core.schemas import Bool, Choice, Date, DateTime, Int, Number, Str, drop, field, text
from ehs_plugins.osha.bodyparts import BodyPartCode
from ehs_plugins.osha.recordability import MAX_DAYS, CaseType, EmploymentType, SpecialCase


class AccessKind(StrEnum):
    """What a request for copies asks for (1904.35(b)(2)(iv)-(v))."""

    log_copy = "log_copy"
    own_301 = "own_301"
    representative_301 = "representative_301"


class Sex(Str):
    """Form 301 item 5 (male/female); ITA codes M and F."""

    openapi = {"enum": ["M", "F"]}

    def check(self, node: colander.SchemaNode, value: Any) -> str:
        raw = super().check(node, value).upper()
        if raw not in ("M", "F"):
            raise colander.Invalid(node, "Must be M or F")
        return raw


class ClockTime(Str):
    openapi = {"pattern": "^([01][0-9]|2[0-3]):[0-5][0-9]$"}

    def check(self, node: colander.SchemaNode, value: Any) -> str:
        raw = super().check(node, value)
        if not re.fullmatch(r"([01][0-9]|2[0-3]):[0-5][0-9]", raw):
            raise colander.Invalid(node, "Must be a time written HH:MM (24-hour)")
        return raw


DAYS = colander.Range(min=0, max=MAX_DAYS)
PHONE = colander.Regex(r"^\+?[0-9][0-9 ().\-]{5,38}$",
                       "Must be a telephone number (digits, spaces, + ( ) . -)")


# JSON name -> (column, colander type, validator)
CASE_FIELDS: dict[str, tuple[str, colander.SchemaType, Any]] = {
    "employmentType": ("employment_type", Choice(EmploymentType), None),
    "workRelated": ("work_related", Bool(nullable=True), None),
    "newCase": ("new_case", Bool(nullable=True), None),
    "died": ("died", Bool(), None),
    "dateOfDeath": ("date_of_death", Date(nullable=True, not_future=True), None),
    "daysAwayFromWork": ("days_away_from_work", Bool(), None),
    "daysAway": ("days_away", Int(), DAYS),
    "restrictedOrTransfer": ("restricted_or_transfer", Bool(), None),
    "daysRestricted": ("days_restricted", Int(), DAYS),
    "medicalTreatment": ("medical_treatment", Bool(), None),
    "lossOfConsciousness": ("loss_of_consciousness", Bool(), None),
    "significantDiagnosis": ("significant_diagnosis", Bool(), None),
    "specialCase": ("special_case", Choice(SpecialCase), None),
    "caseType": ("case_type", Choice(CaseType, nullable=True), None),
    "privacyCase": ("privacy_case", Bool(), None),
    "inpatientHospitalization": ("inpatient_hospitalization", Bool(), None),
    "amputation": ("amputation", Bool(), None),
    "lossOfEye": ("loss_of_eye", Bool(), None),
    "reportedToOshaAt": ("reported_to_osha_at", DateTime(nullable=True), None),
    "jobTitle": ("job_title", Str(nullable=True, max_length=100), colander.Length(max=100)),
    "natureOfInjury": ("nature_of_injury", Str(nullable=True, max_length=2000), colander.Length(max=2000)),
    "bodyPart": ("body_part", Str(nullable=True, max_length=200), colander.Length(max=200)),
    # Form 301 item 16 as a code (OIICS 2.01, `bodyparts`): prefills bodyPart.
    "bodyPartCode": ("body_part_code", BodyPartCode(nullable=True), None),
    "objectSubstance": ("object_substance", Str(nullable=True, max_length=2000), colander.Length(max=2000)),
    "activityBefore": ("activity_before", Str(nullable=True, max_length=2000), colander.Length(max=2000)),
    "whatHappened": ("what_happened", Str(nullable=True, max_length=5000), colander.Length(max=5000)),
    "dateOfBirth": ("date_of_birth", Date(nullable=True, not_future=True), None),
    "dateOfHire": ("date_of_hire", Date(nullable=True), None),
    "sex": ("sex", Sex(nullable=True), None),
    "employeeAddress": ("employee_address", Str(nullable=True, max_length=500), colander.Length(max=500)),
    "physicianName": ("physician_name", Str(nullable=True, max_length=200), colander.Length(max=200)),
    "treatmentFacility": ("treatment_facility", Str(nullable=True, max_length=500), colander.Length(max=500)),
    "treatedInEmergencyRoom": ("treated_in_emergency_room", Bool(nullable=True), None),
    "timeStartedWork": ("time_started_work", ClockTime(nullable=True), None),
    # Form 301 item 13: "check if time cannot be determined" (ITA time_unknown).
    "timeUnknown": ("time_unknown", Bool(), None),
    # When the employer learned of the event, if later (1904.39(b)(7)-(8)).
    "learnedAt": ("learned_at", DateTime(nullable=True), None),
    # Form 301 "Completed by / Title / Phone / Date".
    "preparerName": ("preparer_name", Str(nullable=True, max_length=200), colander.Length(max=200)),
    "preparerTitle": ("preparer_title", Str(nullable=True, max_length=200), colander.Length(max=200)),
    "preparerPhone": ("preparer_phone", Str(nullable=True, max_length=40), PHONE),
    "preparedAt": ("prepared_at", Date(nullable=True, not_future=True), None),
}
PERIOD_KINDS = ("away", "restricted")
MAX_PERIODS = 50


class PeriodKind(Str):
    openapi = {"enum": list(PERIOD_KINDS)}

    def check(self, node: colander.SchemaNode, value: Any) -> str:
        raw = super().check(node, value)
        if raw not in PERIOD_KINDS:
            raise colander.Invalid(node, "Must be one of: away, restricted")
        return raw


def periods_node() -> colander.SchemaNode:
    """`periods`: Form 301 item 12's days as dates, 1904.7(b)(3)-(4): a list
    of {kind: away|restricted, from: first day, to: last day or null while
    open}; when given, daysAway and daysRestricted are counted from them."""
    period = colander.SchemaNode(colander.Mapping(), name="period")
    period.add(field(PeriodKind(), name="kind"))
    period.add(field(Date(), name="from"))
    period.add(field(Date(nullable=True), name="to", missing=None))
    return colander.SchemaNode(colander.Sequence(), period, name="periods", missing=drop,
                               validator=colander.Length(max=MAX_PERIODS))


def case_schema(create: bool) -> colander.SchemaNode:
    schema = colander.SchemaNode(colander.Mapping())
    # A case started from an injured person of the incident (`personId`,
    # ehs_core.people) takes their name when none is given.
    schema.add(text(200, min_length=1, name="name", missing=drop))
    if create:
        schema.add(field(Int(nullable=True), missing=drop, name="personId"))
    for name, (_, typ, validator) in CASE_FIELDS.items():
        kw = {"validator": validator} if validator is not None else {}
        schema.add(field(typ, missing=drop, name=name, **kw))
    schema.add(periods_node())
    schema.changed_elsewhere = {
        name: f"{name} is worked out from the answers (29 CFR 1904.7) and cannot be set"
        for name in ("recordable", "outcome", "severeReport", "missingFields", "recordBy", "dateWarnings")}
    return schema


def case_create_schema(registry: Any) -> colander.SchemaNode:
    return case_schema(create=True)


def case_update_schema(registry: Any) -> colander.SchemaNode:
    return case_schema(create=False)


class HoursEntry(colander.MappingSchema):
    month = field(Int(), validator=colander.Range(1, 12))
    hours = field(Number(nullable=True), validator=colander.Range(min=0, max=10**11))
    averageEmployees = field(Number(nullable=True), validator=colander.Range(min=0, max=10**7))


class HoursEntries(colander.SequenceSchema):
    entry = HoursEntry()
    validator = colander.Length(max=12)


class YearQuery(colander.MappingSchema):
    year = field(Str(), validator=colander.Regex(r"^(19|20)[0-9]{2}$", "Must be a year such as 2026"))


class LogQuery(YearQuery):
    siteId = field(Str(), validator=colander.Regex(r"^[0-9]{1,9}$", "Must be a site id"))




class CertificationBody(colander.MappingSchema):
    """The 300A certification (1904.32(b)(3)): who certified it and when.
    Each field may be left empty (null) until the executive signs."""

    executiveName = text(200, nullable=True, missing=None)
    executiveTitle = text(200, nullable=True, missing=None)
    phone = field(Str(nullable=True, max_length=40), missing=None, validator=PHONE)
    certifiedOn = field(Date(nullable=True, not_future=True), missing=None)


class AccessRequestBody(colander.MappingSchema):
    """A request for a copy of the records (1904.35(b)(2))."""

    kind = field(Choice(AccessKind))
    requesterName = text(200, min_length=1)
    siteId = field(Int(), validator=colander.Range(min=1, max=10**9))
    year = field(Int(), validator=colander.Range(min=1970, max=2999))
    caseId = field(Int(nullable=True), missing=None, validator=colander.Range(min=1, max=10**9))


class FulfilBody(colander.MappingSchema):
    """To whom the copy was given (the person or their representative)."""

    givenTo = text(200, min_length=1)


class SubmissionBody(colander.MappingSchema):
    """File a site-year with OSHA's ITA API: a dry run (OSHA's preview
    environment, the default) or the real filing; changeReason when the year
    was filed before."""

    siteId = field(Int(), validator=colander.Range(min=1, max=10**9))
    year = field(Int(), validator=colander.Range(min=2016, max=2999))
    dryRun = field(Bool(), missing=True)
    changeReason = text(100, nullable=True, missing=None)
