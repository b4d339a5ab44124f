"""Injury and illness cases (convention as the core's service modules, see
ehs_core.incidents.filing: the request is the unit of work and
`request.identity` the safety manager, data is validated, refusals are
domain errors). Every change publishes CaseChanged."""

from __future__ import annotations

import datetime as dt
import functools
import json
from typing import Any, NamedTuple

from pyramid.request import Request
from sqlalchemy import ColumnElement, Integer, bindparam, func, inspect, select

from ehs_core.db import PlainRead, utcnow
from ehs_core.errors import Conflict, DomainError, Invalid, NotFound
from ehs_core.events import actor, publish
from ehs_core.incidents.models import Incident
from ehs_core.people import services as people
from ehs_core.rowsjson import DATE, FLAG, INSTANT, decoder, json_rows
from ehs_core.sites.services import site_timezone
from ehs_core.sites.zones import site_zone
from ehs_plugins.osha import bodyparts, dates, days
from ehs_plugins.osha.cases import LoggedCase, case_number, recalculate
from ehs_plugins.osha.events import CaseChanged
from ehs_plugins.osha.models import InjuryCase, RemovedCase
from ehs_plugins.osha.recordability import MAX_DAYS, EmploymentType, SpecialCase
from ehs_plugins.osha.schemas import CASE_FIELDS
from ehs_plugins.osha.trail import decision

# Incident types that by definition hurt no one (29 CFR 1904.4: a case is an
# injury or illness); property damage or a spill may still have hurt someone.
NO_ONE_HURT = ("near_miss", "hazard")


def zone_of(request: Request, incident: Incident) -> Any:
    """The establishment's clock for this incident: its site's zone, else
    the server's (the records show the event on the establishment's clock),
    from the sites each worker keeps."""
    return site_zone(site_timezone(request, incident.site_id), request.registry)


def load_incident(request: Request, number: int, lock: bool = False) -> Incident:
    """The caller's organization's incident with this number (locked until
    commit when `lock`)."""
    query = select(Incident).where(
        Incident.organization_id == request.identity.account.organization_id, Incident.number == number)
    if lock:
        query = query.with_for_update()
    incident = request.dbsession.execute(query).scalar()
    if incident is None:
        raise NotFound()
    return incident


def load_case(request: Request, case_id: int) -> tuple[InjuryCase, Incident]:
    """A case of the caller's organization and its incident."""
    case = request.dbsession.get(InjuryCase, case_id)
    if case is None:
        raise NotFound()
    incident = request.dbsession.get(Incident, case.incident_id)
    if incident is None or incident.organization_id != request.identity.account.organization_id:
        raise NotFound()
    return case, incident


def apply_answers(case: InjuryCase, data: dict[str, Any], incident: Incident, zone: dt.tzinfo,
                  now: dt.datetime | None = None) -> None:
    """Set the answers and reclassify the case (29 CFR 1904.7); dates that
    cannot be are refused (`dates.impossible`), nothing set when one is.
    `periods`, when given, count daysAway and daysRestricted (`days`,
    1904.7(b)(3)-(4)); typed counts stay possible without periods."""
    now = now or utcnow()
    if "name" in data:
        case.name = data["name"]
    for name, (column, _, _) in CASE_FIELDS.items():
        if name in data:
            setattr(case, column, data[name])
    issues: list[tuple[str, str]] = []
    event_day = incident.occurred_at.astimezone(zone).date()
    today = now.astimezone(zone).date()
    if "periods" in data:
        periods = [days.Period(item["kind"], item["from"], item["to"]) for item in data["periods"]]
        if periods:
            issues += [(name, f"{name} is counted from the periods: leave it out, or send no periods")
                       for name in ("daysAway", "daysRestricted") if name in data]
        issues += days.problems(periods, event_day, today)
        case.periods = days.dump(periods)
    issues += dates.impossible(case, incident.occurred_at, zone, now, set(data))
    if issues:
        raise DomainError("Invalid request", [{"path": path, "message": message} for path, message in issues])
    periods = days.parse(case.periods)
    if periods:
        case.days_away, case.days_restricted = days.count_days(periods, event_day, today)
        # A period confined to the day of the injury does not count (1904.7(b)(3)(i), (b)(4)(i)).
        case.days_away_from_work = any(p.kind == days.AWAY and (p.end is None or p.end > event_day)
                                       for p in periods)
        case.restricted_or_transfer = any(p.kind == days.RESTRICTED and (p.end is None or p.end > event_day)
                                          for p in periods)
    if (case.days_away or 0) + (case.days_restricted or 0) > MAX_DAYS:
        # 29 CFR 1904.7(b)(3)(vii)
        raise Invalid("daysAway", f"Days away plus days restricted must not exceed {MAX_DAYS}")
    if case.date_of_death is not None and not case.died:
        raise Invalid("dateOfDeath", "Only for a death")
    recalculate(case)
    case.updated_at = now


def list_cases(request: Request, incident: Incident) -> list[InjuryCase]:
    return list(request.dbsession.execute(select(InjuryCase).where(
        InjuryCase.incident_id == incident.id).order_by(InjuryCase.sequence)).scalars())


def osha_cases_read(request: Request) -> dict[int, list[InjuryCase]]:
    """`request.osha_cases_read` (reified): the incidents' cases this
    request has read, by incident id: the incident page shows them twice
    (the detail's count, the panel). A request attribute, new with each
    attempt pyramid_retry makes (the style guide: per-request state goes
    through Pyramid's request methods, never parked in request.environ)."""
    return {}


def osha_case_counts(request: Request) -> dict[int, int]:
    """`request.osha_case_counts` (reified): how many cases each incident
    has, as this request has read them (see `osha_cases_read`)."""
    return {}


def cases_of(request: Request, incident: Incident) -> list[InjuryCase]:
    """`list_cases`, read once per request (forgotten when a case changes)."""
    read = request.osha_cases_read
    if incident.id not in read:
        read[incident.id] = list_cases(request, incident)
    return read[incident.id]


# Every column of an incident's cases, by attribute name, read on the DBAPI
# cursor (`PlainRead`): the incident page's panel only shows them, so a GET
# needs no ORM entities to track (forty-odd columns each).
_CASE_ATTRIBUTES = tuple((attr.key, attr.columns[0]) for attr in inspect(InjuryCase).column_attrs)
_CASE_KEYS = tuple(key for key, _ in _CASE_ATTRIBUTES)
_INCIDENT_CASES = PlainRead(select(*(column for _, column in _CASE_ATTRIBUTES)).where(
    InjuryCase.incident_id == bindparam("incident", type_=Integer)).order_by(InjuryCase.sequence))


def cases_to_show(request: Request, incident: Incident,
                  read: tuple[bool, Any] = (False, None)) -> list[InjuryCase] | list[LoggedCase]:
    """The incident's cases to show, in order: read-only `LoggedCase`s with
    every column, or the request's ORM cases when it has read or changed
    them (`cases_of`) or is not a GET (its own changes may not be written
    yet: the ORM writes them before it reads). `read`: (True, the
    `cases_column` value) when the page read them with the incident."""
    if incident.id in request.osha_cases_read or request.method != "GET":
        return cases_of(request, incident)
    found, value = read
    if found:
        return decode_cases(value)
    return [LoggedCase(dict(zip(_CASE_KEYS, row, strict=True)))
            for row in _INCIDENT_CASES.all(request, {"incident": incident.id})]


@functools.cache
def cases_column() -> ColumnElement[Any]:
    """The incident's cases, every column, as one JSON value: the incident
    page reads them with the incident (its panel's `read`), so the panel of
    an injury or illness sends no statement of its own (the style guide: one
    read model per page)."""
    return select(json_rows(*(column for _, column in _CASE_ATTRIBUTES))).where(
        InjuryCase.incident_id == Incident.id).scalar_subquery()


def _json_kind(column: Any) -> Any:
    """How a case column comes back from JSON (`ehs_core.rowsjson`); an
    instant's type (`UTCDateTime`) is a decorator of SQL's DateTime."""
    python_type = getattr(column.type, "impl", column.type).python_type
    if python_type is bool:
        return FLAG
    if python_type is dt.datetime:
        return INSTANT
    if python_type is dt.date:
        return DATE
    return None


# A case's columns as `cases_column` writes them, decoded by the same
# `ehs_core.rowsjson.decoder` as the core's sections.
_CaseRow = NamedTuple("_CaseRow", [(key, Any) for key in _CASE_KEYS])  # type: ignore[misc]
_KINDS = {key: kind for key, column in _CASE_ATTRIBUTES if (kind := _json_kind(column)) is not None}
_decode = decoder(_CaseRow, order=("sequence",), **_KINDS)


def decode_cases(value: Any) -> list[LoggedCase]:
    """`cases_column`'s value as `LoggedCase`s, in their order."""
    return [LoggedCase(row._asdict()) for row in _decode(value)]


def counts_of(request: Request, incidents: list[Incident]) -> dict[int, int]:
    """How many cases each incident has (the injured count everyone who
    may see the incident sees), read once per request."""
    counted = request.osha_case_counts
    wanted = [i.id for i in incidents if i.id not in counted]
    if wanted:
        found = dict(request.dbsession.execute(
            select(InjuryCase.incident_id, func.count()).where(InjuryCase.incident_id.in_(wanted))
            .group_by(InjuryCase.incident_id)).all())
        counted.update({i: found.get(i, 0) for i in wanted})
    return {i.id: counted[i.id] for i in incidents}


def forget_read(request: Request) -> None:
    """A case changed: what the request read of cases and counts is read again."""
    request.osha_cases_read.clear()
    request.osha_case_counts.clear()


def create_case(request: Request, number: int, data: dict[str, Any]) -> tuple[InjuryCase, Incident]:
    """The next case of the incident (one per injured or ill person)."""
    incident = load_incident(request, number, lock=True)  # serialises case numbering per incident
    if incident.type in NO_ONE_HURT:
        raise Conflict(f"A {incident.type.replace('_', ' ')} hurt no one, so it has no injury or "
                       "illness case; change the incident's type first if someone was hurt")
    person_id = data.pop("personId", None)
    if person_id is not None:
        person = injured_person(request, incident, person_id)
        data.setdefault("name", person.name)
        if "employmentType" not in data and person.employment_type:
            data["employmentType"] = PERSON_EMPLOYMENT.get(person.employment_type, EmploymentType.visitor)
    if "name" not in data:
        raise Invalid("name", "Required")
    last = request.dbsession.execute(select(func.max(InjuryCase.sequence)).where(
        InjuryCase.incident_id == incident.id)).scalar()
    case = InjuryCase(incident_id=incident.id, sequence=(last or 0) + 1, created_at=utcnow(),
                      employment_type="employee", died=False, days_away_from_work=False, days_away=0,
                      restricted_or_transfer=False, days_restricted=0, medical_treatment=False,
                      loss_of_consciousness=False, significant_diagnosis=False, special_case="none",
                      privacy_case=False, inpatient_hospitalization=False, amputation=False,
                      loss_of_eye=False, time_unknown=False, person_id=person_id)
    # 1904.8(a): a needlestick or sharps injury is an injury (M1), even on an
    # incident typed as an illness, until the employee develops an illness
    # from it (then caseType is set): the incident's type is no default for it.
    if "caseType" not in data and incident.type in ("injury", "illness") \
            and data.get("specialCase") != SpecialCase.needlestick:
        data["caseType"] = "injury" if incident.type == "injury" else "other_illness"
    zone = zone_of(request, incident)
    # Form 301 "Completed by" and "Date": the person entering the case, today, until changed.
    user = getattr(request.identity, "user", None)
    if user is not None:
        data.setdefault("preparerName", user.name)
    data.setdefault("preparedAt", utcnow().astimezone(zone).date())
    bodyparts.prefill(request, case, data)
    apply_answers(case, data, incident, zone)
    request.dbsession.add(case)
    request.dbsession.flush()
    forget_read(request)
    publish(request, CaseChanged(request, case=case, incident=incident, change="created", before=None,
                                 actor_id=actor(request)))
    return case, incident


# The core's words for employment (ehs_core.people.schemas.EmploymentType)
# as a case's: a member of the public is no employee of anyone here.
PERSON_EMPLOYMENT = {"employee": EmploymentType.employee, "temporary_worker": EmploymentType.temporary_worker,
                     "contractor": EmploymentType.contractor, "visitor": EmploymentType.visitor,
                     "public": EmploymentType.visitor}


def case_of_person(request: Request, person_id: int) -> InjuryCase | None:
    return request.dbsession.execute(select(InjuryCase).where(InjuryCase.person_id == person_id)).scalar()


def injured_person(request: Request, incident: Incident, person_id: int) -> Any:
    """The incident's injured person a case is started from: one case per
    injured person (1904.4(a), each injured or ill employee's case; the
    Form 301 is per person), so a second is refused (409)."""
    person = people.person_of(request, incident, person_id)
    if person is None:
        raise Invalid("personId", "Not a person named on this incident")
    if person.involvement != "injured":
        raise Invalid("personId", "Only an injured person has an injury case")
    existing = case_of_person(request, person.id)
    if existing is not None:
        raise Conflict(f"{person.name} already has an injury case ({case_number(incident, existing)}): "
                       "one case per injured person",
                       [{"path": "personId", "message": "This person already has an injury case"}])
    return person


def update_case(request: Request, case: InjuryCase, incident: Incident, data: dict[str, Any]) -> InjuryCase:
    """Change a case's answers; the decision is recalculated."""
    before = decision(case)
    bodyparts.prefill(request, case, data)
    apply_answers(case, data, incident, zone_of(request, incident))
    forget_read(request)
    publish(request, CaseChanged(request, case=case, incident=incident, change="updated", before=before,
                                 actor_id=actor(request)))
    return case


def delete_case(request: Request, case: InjuryCase, incident: Incident) -> None:
    """Take a case off the log, the totals and the forms. It is never
    destroyed: a copy of every column is kept in `osha_removed_cases`, with
    who removed it and when, for the retention of 29 CFR 1904.33."""
    forget_read(request)
    publish(request, CaseChanged(request, case=case, incident=incident, change="deleted",
                                 before=decision(case), actor_id=actor(request)))
    columns = {attr.key: getattr(case, attr.key) for attr in inspect(InjuryCase).column_attrs}
    request.dbsession.add(RemovedCase(
        case_id=case.id, incident_id=case.incident_id, removed_by_id=actor(request),
        data=json.dumps(columns, default=lambda value: value.isoformat() if hasattr(value, "isoformat")
                        else str(value), sort_keys=True)))
    request.dbsession.delete(case)
