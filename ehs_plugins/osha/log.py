"""The OSHA 300 Log, 300A summary and rates of one site and year, computed
from recordable cases and monthly hours."""

from __future__ import annotations

import datetime as dt
import math
from dataclasses import dataclass, field
from decimal import ROUND_HALF_UP, Decimal
from functools import cached_property
from typing import Any

from pyramid.registry import Registry
from pyramid.request import Request
from sqlalchemy import inspect, select
from sqlalchemy.orm import Session

from ehs_core.db import utcnow
from ehs_core.incidents.models import Incident
from ehs_core.sites.models import Area, Site
from ehs_core.sites.services import site_choices
from ehs_core.sites.zones import site_zone
from ehs_plugins.osha import bodyparts, days
from ehs_plugins.osha.cases import LoggedCase, LoggedIncident, case_number
from ehs_plugins.osha.deidentify import name_parts, remove_name
from ehs_plugins.osha.models import InjuryCase, SiteHours
from ehs_plugins.osha.recordability import CaseType, Outcome, size_code

OUTCOME_COLUMNS = {Outcome.death: "G", Outcome.days_away: "H", Outcome.restricted: "I",
                   Outcome.other_recordable: "J"}
TYPE_COLUMNS = {CaseType.injury: "M1", CaseType.skin_disorder: "M2",
                CaseType.respiratory_condition: "M3", CaseType.poisoning: "M4",
                CaseType.hearing_loss: "M5", CaseType.other_illness: "M6"}
TOTAL_KEYS = ("G", "H", "I", "J", "K", "L", "M1", "M2", "M3", "M4", "M5", "M6")
RATE_BASE = 200_000  # 100 full-time workers x 40 hours x 50 weeks
PRIVACY_NAME = "Privacy case"  # 1904.29(b)(6)
ESTABLISHMENT_REQUIRED = {"ein": "ein", "streetAddress": "street_address", "city": "city",
                          "state": "state", "zip": "zip", "naicsCode": "naics_code"}


@dataclass
class SiteYear:
    site: Site
    year: int
    # The establishment's zone: its dates, times and year (1904.32(a)(1)).
    zone: dt.tzinfo
    cases: list[tuple[LoggedCase, LoggedIncident]] = field(default_factory=list)
    months: dict[int, SiteHours] = field(default_factory=dict)

    def occurred(self, incident: LoggedIncident) -> dt.datetime:
        """When the event happened on the establishment's clock (Form 300
        column D, Form 301 items 10-12): converted once, by `load`."""
        return incident.local

    @cached_property
    def totals(self) -> dict[str, int]:
        """Column totals (read by the log, the 300A, the rates and the checks;
        counted once, after `load` has gathered the cases)."""
        totals = dict.fromkeys(TOTAL_KEYS, 0)
        for case, _ in self.cases:
            # Outcome and CaseType are StrEnums: their values are the keys.
            totals[OUTCOME_COLUMNS[case.outcome]] += 1
            totals["K"] += case.days_away or 0
            totals["L"] += case.days_restricted or 0
            if case.effective_case_type:
                totals[TYPE_COLUMNS[case.effective_case_type]] += 1
        return totals

    @property
    def total_hours(self) -> Decimal:
        return sum((m.hours or Decimal(0) for m in self.months.values()), Decimal(0))

    @property
    def total_hours_whole(self) -> int:
        return int(self.total_hours.quantize(Decimal(1), rounding=ROUND_HALF_UP))

    @property
    def annual_average_employees(self) -> int | None:
        """300A: total paid in all pay periods / number of pay periods, rounded up."""
        counts = [m.average_employees for m in self.months.values() if m.average_employees is not None]
        if not counts:
            return None
        return math.ceil(sum(counts) / len(counts))

    @property
    def peak_employees(self) -> int | None:
        counts = [m.average_employees for m in self.months.values() if m.average_employees is not None]
        return math.ceil(max(counts)) if counts else None

    def rates(self) -> dict[str, float | None]:
        totals, hours = self.totals, self.total_hours

        def rate(count: int) -> float | None:
            if hours <= 0:
                return None
            return float((Decimal(count) * RATE_BASE / hours).quantize(Decimal("0.01"), ROUND_HALF_UP))

        return {
            "trir": rate(totals["G"] + totals["H"] + totals["I"] + totals["J"]),
            "dart": rate(totals["H"] + totals["I"]),
            # Lost-time case rate from column H alone (deaths not added).
            "ltir": rate(totals["H"]),
        }


def year_bounds(year: int) -> tuple[dt.datetime, dt.datetime]:
    # Wide enough for any UTC offset; cases are then sorted by their local date.
    return (dt.datetime(year, 1, 1, tzinfo=dt.UTC) - dt.timedelta(hours=15),
            dt.datetime(year + 1, 1, 1, tzinfo=dt.UTC) + dt.timedelta(hours=15))


# The columns of a case by attribute name (not its bookkeeping times: no log,
# form or check reads them, and each costs a conversion per row), and what the
# log reads of its incident (its area's name joined: column E).
UNLOGGED = frozenset({"created_at", "updated_at", "reported_to_osha_at", "severe_notice_sent_at"})
CASE_COLUMNS = tuple((attr.key, attr.columns[0]) for attr in inspect(InjuryCase).column_attrs
                     if attr.key not in UNLOGGED)
# What the 300 Log, the ITA case file and its checks read of a case (not the
# answers behind the decision, the address, physician or facility): half the
# columns, and the narratives' bytes are most of what the database sends.
LOG_FIELDS = ("id", "sequence", "name", "job_title", "nature_of_injury", "body_part", "body_part_code",
              "object_substance",
              "activity_before", "what_happened", "outcome", "days_away", "days_restricted",
              "effective_case_type", "effective_privacy", "date_of_death", "date_of_birth", "date_of_hire",
              "sex", "treated_in_emergency_room", "inpatient_hospitalization", "time_started_work",
              "time_unknown", "periods")
LOG_COLUMNS = tuple((key, column) for key, column in CASE_COLUMNS if key in LOG_FIELDS)
# The log page adds each case's missing fields (`cases.missing_fields`: the
# Form 301 fields it needs, whether it is recordable, whether the person
# died), still not the physician, facility, preparer or decision answers.
PAGE_FIELDS = (*LOG_FIELDS, "employee_address", "recordable", "died")
PAGE_COLUMNS = tuple((key, column) for key, column in CASE_COLUMNS if key in PAGE_FIELDS)
INCIDENT_COLUMNS = (Incident.id, Incident.number, Incident.site_id, Incident.area_id,
                    Incident.location_detail, Incident.title, Area.name, Incident.occurred_at)


def load(dbsession: Session, registry: Registry, sites: list[Site], year: int,
         columns: tuple[tuple[str, Any], ...] = CASE_COLUMNS, only: Any = None) -> list[SiteYear]:
    """Recordable cases and hours of these sites in `year`, in two
    queries; a case belongs to the year of its local date at the site
    (1904.32(a)(1): the establishment's calendar year). The cases are
    read-only `LoggedCase`s (plain attributes, no ORM entities), read as
    Core rows (the ORM's loading machinery cost more than the rows), and
    each incident's time is put on the establishment's clock once; each
    case gets its case number (column A), `where` (E) and `description` (F).
    `columns`: the case's attributes to read (`LOG_COLUMNS` for the log
    and the ITA files; a case lacks the others). `only`: a condition on the
    case, its incident and area that leaves out the cases the caller needs
    not read (`checks.may_find`)."""
    by_site = {site.id: SiteYear(site, year, site_zone(site.timezone, registry)) for site in sites}
    start, end = year_bounds(year)
    keys = [key for key, _ in columns]
    width = len(keys)
    site_at = width + 2
    query = (select(*(column for _, column in columns), *INCIDENT_COLUMNS)
             .join(Incident, Incident.id == InjuryCase.incident_id)
             .outerjoin(Area, Area.id == Incident.area_id)
             .where(Incident.site_id.in_(list(by_site)), InjuryCase.recordable.is_(True),
                    Incident.occurred_at >= start, Incident.occurred_at < end)
             .order_by(Incident.occurred_at, Incident.number, InjuryCase.sequence))
    rows = dbsession.connection().execute(query if only is None else query.where(only))
    incidents: dict[int, LoggedIncident | None] = {}
    for row in rows.all():
        item = by_site[row[site_at]]
        incident_id = row[width]
        if incident_id in incidents:
            incident = incidents[incident_id]
        else:
            local = row[-1].astimezone(item.zone)
            # An incident of the neighbouring year (the bounds are wide): none of its cases.
            incident = incidents[incident_id] = LoggedIncident(*row[width:], local) \
                if local.year == year else None
        if incident is not None:
            case = LoggedCase(dict(zip(keys, row)))  # noqa: B905 (keys: the first columns)
            # Columns A, E and F, read by the log, the ITA case file and its checks: made once.
            case.case_number = case_number(incident, case)
            case.where = where_occurred(item, incident)
            case.description = column_f(case, incident)
            if getattr(case, "periods", None):
                count_open_periods(case, incident, item.zone)
            item.cases.append((case, incident))
    read_months(dbsession, by_site, year)
    return list(by_site.values())


# What the 300A's totals read of a case (`SiteYear.totals`, with its open
# periods counted up to today): the summary page reads no more.
TOTAL_FIELDS = ("id", "outcome", "days_away", "days_restricted", "effective_case_type", "periods")
TOTAL_COLUMNS = tuple((key, column) for key, column in CASE_COLUMNS if key in TOTAL_FIELDS)


def load_totals(dbsession: Session, registry: Registry, site: Site, year: int) -> SiteYear:
    """The site-year of the 300A summary page: its hours and, for the
    totals, the cases' outcome, days and type only (`TOTAL_COLUMNS`), with
    the same year on the establishment's clock and the same open periods as
    `load`, so the same `SiteYear.totals` (issue #42 item 2: the page read
    every column of every case, made the log's rows and ran the ITA checks
    to show twelve numbers). Through the (site_id, occurred_at) index."""
    item = SiteYear(site, year, site_zone(site.timezone, registry))
    start, end = year_bounds(year)
    keys = [key for key, _ in TOTAL_COLUMNS]
    rows = dbsession.connection().execute(
        select(*(column for _, column in TOTAL_COLUMNS), Incident.occurred_at)
        .join(Incident, Incident.id == InjuryCase.incident_id)
        .where(Incident.site_id == site.id, InjuryCase.recordable.is_(True),
               Incident.occurred_at >= start, Incident.occurred_at < end))
    for row in rows.all():
        local = row[-1].astimezone(item.zone)
        if local.year != year:
            continue  # an incident of the neighbouring year (the bounds are wide)
        case = LoggedCase(dict(zip(keys, row)))  # noqa: B905 (keys: the first columns)
        if case.periods:
            periods = days.parse(case.periods)
            if days.is_open(periods):
                case.days_away, case.days_restricted = days.count_days(
                    periods, local.date(), utcnow().astimezone(item.zone).date())
        item.cases.append((case, None))  # type: ignore[arg-type] (totals read no incident)
    read_months(dbsession, {site.id: item}, year)
    return item


def count_open_periods(case: LoggedCase, incident: LoggedIncident, zone: dt.tzinfo) -> None:
    """A case with a period of days still open counts it up to today on the
    establishment's clock (1904.7(b)(3)(ii)): the stored counts are those of
    the day the case was last saved."""
    periods = days.parse(case.periods)
    if days.is_open(periods):
        case.days_away, case.days_restricted = days.count_days(
            periods, incident.local.date(), utcnow().astimezone(zone).date())


def read_months(dbsession: Session, by_site: dict[int, SiteYear], year: int) -> None:
    """The hours and employees of each site's months (`SiteYear.months`)."""
    for hours in dbsession.execute(select(SiteHours).where(
            SiteHours.site_id.in_(list(by_site)), SiteHours.year == year)).scalars():
        by_site[hours.site_id].months[hours.month] = hours


def load_months(dbsession: Session, registry: Registry, sites: list[Site], year: int) -> list[SiteYear]:
    """These sites' years with their months only (the hours grid and its
    totals read no case)."""
    by_site = {site.id: SiteYear(site, year, site_zone(site.timezone, registry)) for site in sites}
    read_months(dbsession, by_site, year)
    return list(by_site.values())


def column_f(case: LoggedCase, incident: LoggedIncident) -> str:
    """300 Log column F: injury or illness, parts of body affected, and the
    object or substance that hurt the person."""
    parts = "; ".join([p for p in (case.nature_of_injury, bodyparts.words(case), case.object_substance) if p])
    return parts or incident.title


def where_occurred(item: SiteYear, incident: LoggedIncident) -> str:
    return incident.location_detail or incident.area_name or item.site.name


def log_row(item: SiteYear, case: LoggedCase, incident: LoggedIncident) -> dict[str, Any]:
    case_type, privacy = case.effective_case_type, case.effective_privacy
    job, where, description = case.job_title, case.where, case.description
    if privacy:
        # 1904.29(b)(6)-(9): nothing on the log may identify a privacy case's
        # person (the log is handed to employees, 1904.35): the name is taken
        # out of columns C, E and F as out of the ITA file (`deidentify`).
        parts = name_parts(case.name)
        job, where, description = (remove_name(value, parts) if value else value
                                   for value in (job, where, description))
    return {
        "caseId": case.id,
        "caseNumber": case.case_number,  # A
        "employeeName": PRIVACY_NAME if privacy else case.name,  # B
        "jobTitle": job,  # C
        "dateOfInjury": item.occurred(incident).date().isoformat(),  # D
        "whereOccurred": where,  # E
        "description": description,  # F
        "outcome": case.outcome,
        "outcomeColumn": OUTCOME_COLUMNS[case.outcome],  # G-J
        "daysAway": case.days_away or 0,  # K
        "daysRestricted": case.days_restricted or 0,  # L
        "caseType": case_type,
        "typeColumn": TYPE_COLUMNS[case_type] if case_type else None,  # M
        "privacyCase": privacy,
    }


def missing_establishment_fields(site: Site) -> list[str]:
    return [name for name, attr in ESTABLISHMENT_REQUIRED.items() if not getattr(site, attr)]


def active_site_names(request: Request) -> list[tuple[int, str]]:
    """(id, name) of the active sites, from the sites each worker keeps
    (`ehs_core.sites.services.site_choices`, current with every change)."""
    return [(site["id"], site["name"]) for site in site_choices(request, include_archived=False)]


def active_sites(dbsession: Session) -> list[Site]:
    return list(dbsession.execute(select(Site).where(Site.archived.is_(False))
                                  .order_by(Site.name, Site.id)).scalars())


def months_json(item: SiteYear) -> list[dict[str, Any]]:
    def number(value: Decimal | None) -> float | int | None:
        if value is None:
            return None
        return int(value) if value == value.to_integral() else float(value)

    return [{"month": m, "hours": number(item.months[m].hours) if m in item.months else None,
             "averageEmployees": number(item.months[m].average_employees) if m in item.months else None}
            for m in range(1, 13)]


def log_json(item: SiteYear) -> dict[str, Any]:
    """The 300 Log rows, 300A totals, hours and rates of a site and year (the
    ITA checks are added beside them, see `checks`)."""
    site, year = item.site, item.year
    return {
        "site": {"id": site.id, "name": site.name},
        "year": year,
        "rows": [log_row(item, case, incident) for case, incident in item.cases],
        "totals": dict(item.totals),
        "hours": months_json(item),
        "totalHoursWorked": item.total_hours_whole,
        "annualAverageEmployees": item.annual_average_employees,
        "peakEmployees": item.peak_employees,
        "sizeCode": size_code(item.peak_employees),
        "rates": item.rates(),
        "missingEstablishmentFields": missing_establishment_fields(site),
    }


