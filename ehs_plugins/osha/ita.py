"""OSHA Injury Tracking Application (ITA) batch-upload CSV files.

Column lists, order and codes follow OSHA's templates and data dictionary
(see shared/reference/osha-recordkeeping.md, section 1): whole numbers only,
leading zeros kept, dates MM/DD/YYYY, times HH:MM, yes/no as 1/0, RFC 4180
quoting. No employee names, addresses, physicians or facilities are written
(1904.41(b)), and the person's name is taken out of every text cell
(see `deidentify`).
"""

from __future__ import annotations

import csv
import datetime as dt
import io
from collections.abc import Iterable
from typing import Any

from ehs_core.incidents.export import safe_cell
from ehs_plugins.osha import bodyparts
from ehs_plugins.osha.cases import LoggedCase, LoggedIncident
from ehs_plugins.osha.deidentify import without_name
from ehs_plugins.osha.log import SiteYear
from ehs_plugins.osha.recordability import CASE_TYPE_CODES, OUTCOME_CODES, size_code

SUMMARY_COLUMNS = (
    "establishment_name", "ein", "company_name", "street_address", "city", "state", "zip", "naics_code",
    "industry_description", "size", "establishment_type", "year_filing_for", "annual_average_employees",
    "total_hours_worked", "no_injuries_illnesses", "total_deaths", "total_dafw_cases", "total_djtr_cases",
    "total_other_cases", "total_dafw_days", "total_djtr_days", "total_injuries", "total_skin_disorders",
    "total_respiratory_conditions", "total_poisonings", "total_hearing_loss", "total_other_illnesses",
    "change_reason",
)
CASE_COLUMNS = (
    "establishment_name", "year_of_filing", "case_number", "job_title", "date_of_incident",
    "incident_location", "incident_description", "incident_outcome", "dafw_num_away", "djtr_num_tr",
    "type_of_incident", "date_of_birth", "date_of_hire", "sex", "treatment_facility_type",
    "treatment_in_patient", "time_started_work", "time_of_incident", "time_unknown",
    "nar_before_incident", "nar_what_happened", "nar_injury_illness", "nar_object_substance",
    "date_of_death",
)


def text(value: Any, limit: int = 255) -> str:
    """A text cell: trimmed to ITA's length, never run as a spreadsheet formula."""
    if value is None:
        return ""
    return safe_cell(" ".join(str(value).split())[:limit])


def date(value: dt.date | None) -> str:
    """MM/DD/YYYY (formatted by hand: strftime costs more, once per date of every case)."""
    return f"{value.month:02d}/{value.day:02d}/{value.year:04d}" if value else ""


def yes_no(value: bool | None) -> str:
    return "" if value is None else ("1" if value else "0")


def summary_row(item: SiteYear, company_name: str) -> list[Any]:
    site, t = item.site, item.totals
    cases = t["G"] + t["H"] + t["I"] + t["J"]
    average = item.annual_average_employees
    hours = item.total_hours_whole
    return [
        text(site.name, 100), site.ein or "", text(company_name, 100), text(site.street_address, 100),
        text(site.city, 100), (site.state or "").upper(), site.zip or "", site.naics_code or "",
        text(site.industry_description, 300), size_code(item.peak_employees) or "",
        site.establishment_type or "", item.year, average if average is not None else "",
        hours if hours else "",
        1 if cases else 2,  # ITA: 1 = had injuries or illnesses, 2 = had none
        t["G"], t["H"], t["I"], t["J"], t["K"], t["L"],
        t["M1"], t["M2"], t["M3"], t["M4"], t["M5"], t["M6"], "",
    ]


def case_texts(case: LoggedCase) -> tuple[str | None, ...]:
    """The free texts of a case's row as stored, before `text` and the
    removal of the name: job title, location, description and the four
    narratives (the CASE_TEXT columns after the establishment's name)."""
    injury = "; ".join([p for p in (case.nature_of_injury, bodyparts.words(case)) if p])
    return (case.job_title, case.where, case.description, case.activity_before, case.what_happened, injury,
            case.object_substance)


def case_codes(case: LoggedCase) -> dict[str, Any]:
    """The coded cells of a case's row: outcome, days, type, date of death."""
    case_type = case.effective_case_type  # a CaseType value: the codes' keys are StrEnums
    return {"incident_outcome": OUTCOME_CODES[case.outcome], "dafw_num_away": case.days_away or 0,
            "djtr_num_tr": case.days_restricted or 0,
            "type_of_incident": CASE_TYPE_CODES[case_type] if case_type else "",
            "date_of_death": date(case.date_of_death)}


def case_row(item: SiteYear, case: LoggedCase, incident: LoggedIncident, establishment: str,
             texts: tuple[str | None, ...] | None = None) -> list[Any]:
    """One row of the case file (`establishment`: the site's name as a cell;
    `texts`: `case_texts`, when already at hand)."""
    texts = texts or case_texts(case)
    job, location, description, before, happened, injury, substance = texts
    clean = without_name(case.name, text, among=texts)
    codes = case_codes(case)
    occurred = item.occurred(incident)
    return [
        establishment, item.year, text(case.case_number, 255),
        clean(job), date(occurred), clean(location), clean(description),
        codes["incident_outcome"], codes["dafw_num_away"], codes["djtr_num_tr"], codes["type_of_incident"],
        date(case.date_of_birth), date(case.date_of_hire), case.sex or "",
        yes_no(case.treated_in_emergency_room), yes_no(case.inpatient_hospitalization),
        # Form 301 item 13: an unknown time is time_unknown 1 and a blank time_of_incident.
        case.time_started_work or "",
        "" if case.time_unknown else f"{occurred.hour:02d}:{occurred.minute:02d}",
        1 if case.time_unknown else 0, clean(before),
        clean(happened), clean(injury), clean(substance), codes["date_of_death"],
    ]


def case_rows(item: SiteYear) -> Iterable[list[Any]]:
    establishment = text(item.site.name, 100)
    for case, incident in item.cases:
        yield case_row(item, case, incident, establishment)


def to_csv(header: Iterable[str], rows: Iterable[list[Any]]) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\r\n", quoting=csv.QUOTE_MINIMAL)
    writer.writerow(header)
    writer.writerows(rows)
    return buffer.getvalue()
