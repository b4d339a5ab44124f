"""OSHA's edit checks on both ITA files, run before download so that the
safety manager can fix what ITA would refuse: each finding names the site,
the case (for the case file) and the field, with its level ("error": ITA
refuses the row or file; "warning": worth a look, ITA takes it).

Sources: the ITA CSV documentation and data dictionary (reference,
section 1), 1904.7(b)(2)-(4) for the outcome columns, 1904.29(b)(10) and
1904.41(b) for names and identifiers.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable
from importlib.resources import files
from typing import Any

from pyramid.registry import Registry
from sqlalchemy import and_, func, or_
from sqlalchemy.orm import Session

from ehs_core.incidents.models import Incident
from ehs_core.sites.models import Area, Site
from ehs_plugins.osha import bodyparts, ita
from ehs_plugins.osha.cases import LoggedCase, LoggedIncident
from ehs_plugins.osha.deidentify import identifiers, may_identify
from ehs_plugins.osha.log import LOG_COLUMNS, SiteYear, load, load_totals, missing_establishment_fields
from ehs_plugins.osha.models import InjuryCase
from ehs_plugins.osha.recordability import Outcome

Add = Callable[..., None]

# ITA's data dictionary: a USPS code of a state or territory (the 50
# states, DC, American Samoa, Guam, the Northern Mariana Islands, Puerto
# Rico, the U.S. Virgin Islands and the Minor Outlying Islands).
USPS_STATES = frozenset("""
    AL AK AZ AR CA CO CT DE FL GA HI ID IL IN IA KS KY LA ME MD MA MI MN MS MO MT NE NV NH NJ NM NY NC ND
    OH OK OR PA RI SC SD TN TX UT VT VA WA WV WI WY DC AS GU MP PR VI UM
""".split())
# ITA's data dictionary: the street address is not a PO Box.
PO_BOX = re.compile(r"\b(?:p\.?\s*o\.?\s*box|post\s+office\s+box|pob\s*\d|box\s+\d+\s*$)", re.IGNORECASE)
# ITA's lengths: street address 100 characters, case-file texts 255 (longer text is cut).
STREET_LIMIT, TEXT_LIMIT = 100, 255
# The case file's text columns fed by the stored texts (`ita.case_texts`, in its order).
TEXT_COLUMNS = ("job_title", "incident_location", "incident_description", "nar_before_incident",
                "nar_what_happened", "nar_injury_illness", "nar_object_substance")


@functools.cache
def naics_codes() -> frozenset[str]:
    """The 6-digit industries of NAICS 2017 (1,057) and 2022 (1,012), the
    U.S. Census Bureau's tables shipped with the plugin (naics_2017.txt,
    naics_2022.txt): ITA takes 2012, 2017 and 2022 codes."""
    root = files("ehs_plugins.osha")
    return frozenset(line.strip() for name in ("naics_2017.txt", "naics_2022.txt")
                     for line in (root / name).read_text("ascii").splitlines() if line.strip())


# Characters ITA refuses in text (vendor documentation, reference 1.1; a defensive rule).
REFUSED = re.compile(r"[()~@#$%^&*?/\\!]")
SUMMARY_TEXT = ("establishment_name", "company_name", "street_address", "city", "industry_description")
CASE_TEXT = ("establishment_name", "job_title", "incident_location", "incident_description",
             "nar_before_incident", "nar_what_happened", "nar_injury_illness", "nar_object_substance")
# Where each case-file column comes from, in the API's words.
CASE_SOURCE = {
    "establishment_name": "the site's name", "job_title": "jobTitle",
    "incident_location": "the incident's location (or its area)",
    "incident_description": "natureOfInjury, bodyPart and objectSubstance (or the incident's title)",
    "nar_before_incident": "activityBefore", "nar_what_happened": "whatHappened",
    "nar_injury_illness": "natureOfInjury and bodyPart", "nar_object_substance": "objectSubstance",
}


def checks(item: SiteYear, site_names: Iterable[tuple[int, str]], company_name: str,
           cases: list[tuple[LoggedCase, LoggedIncident]] | None = None) -> list[dict[str, Any]]:
    """Every finding for one site and year, the 300A file's first
    (`site_names`: (id, name) of every active site, for the unique name;
    `cases`: the cases to check when not all of `item.cases`, see
    `site_year_checks`)."""
    found: list[dict[str, Any]] = []

    def add(field_name: str, message: str, level: str = "error",
            case: tuple[LoggedCase, LoggedIncident] | None = None) -> None:
        found.append({"siteId": item.site.id, "siteName": item.site.name,
                      "caseId": case[0].id if case else None,
                      "caseNumber": case[0].case_number if case else None,
                      "field": field_name, "level": level, "message": message})

    summary_checks(item, site_names, add)
    row = dict(zip(ita.SUMMARY_COLUMNS, ita.summary_row(item, company_name), strict=True))
    for column in SUMMARY_TEXT:
        refused(add, column, row[column], "the establishment's " + column.replace("_", " "))
    case_checks(item, add, item.cases if cases is None else cases)
    return found


def refused(add: Add, column: str, value: Any, source: str,
            case: tuple[LoggedCase, LoggedIncident] | None = None) -> None:
    value = str(value)
    if REFUSED.search(value):  # seldom: most cells need no list of characters
        bad = sorted(set(REFUSED.findall(value)))
        add(column, f"ITA refuses the characters {' '.join(bad)}: remove them from {source}", case=case)


def case_checks(item: SiteYear, add: Add, cases: list[tuple[LoggedCase, LoggedIncident]]) -> None:
    """The case file, checked on the very cells it will hold. Taking the
    name out, trimming and quoting never add a refused character, an "@" or
    a digit, so a case whose stored texts hold none of them cannot fail a
    text check: only its coded cells are made and checked (most cases)."""
    establishment = ita.text(item.site.name, 100)
    establishment_suspect = REFUSED.search(establishment) or may_identify(establishment)
    for case in cases:
        texts = ita.case_texts(case[0])
        for column, value in zip(TEXT_COLUMNS, texts, strict=True):
            if value and len(value) > TEXT_LIMIT and len(" ".join(value.split())) > TEXT_LIMIT:
                add(column, f"ITA takes {TEXT_LIMIT} characters: the rest of {CASE_SOURCE[column]} is cut "
                            "in the file; shorten it to keep what matters", "warning", case)
        joined = "\n".join([t for t in texts if t])
        suspect = establishment_suspect or REFUSED.search(joined) or may_identify(joined)
        row = dict(zip(ita.CASE_COLUMNS, ita.case_row(item, *case, establishment, texts), strict=True)) \
            if suspect else ita.case_codes(case[0])
        outcome, away, restricted = row["incident_outcome"], row["dafw_num_away"], row["djtr_num_tr"]
        if outcome == 2 and not away:  # 1904.7(b)(3): days away are counted and entered (K)
            add("dafw_num_away", "A days-away case needs its days away from work (daysAway)", case=case)
        if outcome == 3 and not restricted:  # 1904.7(b)(4): restricted days are counted (L)
            add("djtr_num_tr", "A restricted or transfer case needs its days restricted (daysRestricted)",
                case=case)
        if outcome == 1 and (away or restricted):  # 1904.7(b)(2): column G
            add("dafw_num_away" if away else "djtr_num_tr",
                "A death case has days away or restricted entered: check daysAway and daysRestricted",
                "warning", case)
        if outcome == 1 and not row["date_of_death"]:
            add("date_of_death", "A death case needs the date of death (dateOfDeath)", case=case)
        if row["type_of_incident"] == "":
            add("type_of_incident", "The case needs its type, column M (caseType)", case=case)
        if not suspect:
            continue
        for column in CASE_TEXT:
            refused(add, column, row[column], CASE_SOURCE[column], case)
            for kind in identifiers(row[column]):
                add(column, f"May hold a personal identifier ({kind}), which ITA must not receive: "
                            f"review {CASE_SOURCE[column]}", "warning", case)


# What `case_checks` can find anything in, as stored: a character ITA
# refuses or an "@" (`may_identify`) or any character outside ASCII
# (Python's digits are Unicode's: kept on the safe side) in one text, or
# three digits in the texts of a row together (`may_identify`).
SUSPECT = r"[()~@#$%^&*?/\\!]|[^\x01-\x7f]"
SUSPECT_TEXT = re.compile(SUSPECT)
THREE_DIGITS = "[0-9][^0-9]*[0-9][^0-9]*[0-9]"
# The longest title of a part of body (`bodyparts.words` of a case without words).
LONGEST_PART = max(len(part.title) for part in bodyparts.PARTS.values())


def may_find(site: Site) -> Any:
    """A condition (SQL) every case of `site` with a finding of
    `case_checks` meets (and most cases do not), so that the submission
    page checks only those (issue #42 item 2: it read and checked every
    case of every site). Its clauses stand for the checks of `case_checks`:
    the coded cells (an open period is counted up to today, so any case
    with periods is read), a text over ITA's length (column F and the
    injury narrative join three texts and a part of body's title), a
    refused character or an "@" in a text the row is made of (the case's,
    its incident's title, column E as `log.where_occurred` makes it), or
    three digits in them together (column F and the injury narrative repeat
    the nature, part of body and object: counted twice). None when the site's own name
    could give a case a finding: then all are read."""
    if len(site.name) > TEXT_LIMIT or SUSPECT_TEXT.search(site.name) or may_identify(site.name):
        return None
    texts = (InjuryCase.job_title, InjuryCase.nature_of_injury, InjuryCase.body_part,
             InjuryCase.object_substance, InjuryCase.activity_before, InjuryCase.what_happened,
             Incident.location_detail, Incident.title, Area.name)

    def length(column: Any) -> Any:
        return func.coalesce(func.length(column), 0)

    def cell(column: Any) -> Any:
        return func.coalesce(column, "")

    # Column E as `log.where_occurred` makes it: the location, else the area, else the site.
    where = func.coalesce(func.nullif(Incident.location_detail, ""), func.nullif(Area.name, ""), site.name)
    repeated = (cell(InjuryCase.nature_of_injury), cell(InjuryCase.body_part),
                cell(InjuryCase.object_substance))
    together = functools.reduce(lambda a, b: a + " " + b, (
        cell(InjuryCase.job_title), where, cell(Incident.title), cell(InjuryCase.activity_before),
        cell(InjuryCase.what_happened), *repeated, *repeated))
    return or_(
        InjuryCase.outcome.is_(None), InjuryCase.outcome == Outcome.death.value,
        InjuryCase.effective_case_type.is_(None),
        and_(InjuryCase.outcome == Outcome.days_away.value, func.coalesce(InjuryCase.days_away, 0) == 0),
        and_(InjuryCase.outcome == Outcome.restricted.value,
             func.coalesce(InjuryCase.days_restricted, 0) == 0),
        InjuryCase.periods.is_not(None),
        and_(func.coalesce(InjuryCase.body_part, "") == "", InjuryCase.body_part_code.is_not(None)),
        length(InjuryCase.nature_of_injury) + length(InjuryCase.body_part)
        + length(InjuryCase.object_substance) + (LONGEST_PART + 4) > TEXT_LIMIT,
        *(length(column) > TEXT_LIMIT for column in texts),
        # One pattern on the row's texts together (a single character needs no column of its own).
        together.regexp_match(f"{SUSPECT}|{THREE_DIGITS}"),
    )


def site_year_checks(dbsession: Session, registry: Registry, site: Site, year: int,
                     site_names: Iterable[tuple[int, str]], company_name: str) -> tuple[SiteYear, list[Any]]:
    """`checks` of a site-year as the submission page shows them, reading
    the totals' columns of every case (`load_totals`) and the ITA file's
    columns of the cases that may have a finding only (`may_find`): the
    same findings, in the same order, as `checks` on the whole `load`."""
    item = load_totals(dbsession, registry, site, year)
    only = may_find(site)
    cases = load(dbsession, registry, [site], year, LOG_COLUMNS, only)[0].cases
    return item, checks(item, site_names, company_name, cases)


def summary_checks(item: SiteYear, site_names: Iterable[tuple[int, str]], add: Add) -> None:
    """The establishment and 300A file: OSHA's cross-field edit checks (ITA
    CSV documentation p. 8) and the field rules of its data dictionary."""
    site, t = item.site, item.totals

    cases = t["G"] + t["H"] + t["I"] + t["J"]
    by_type = sum(t[key] for key in ("M1", "M2", "M3", "M4", "M5", "M6"))
    if by_type != cases:
        add("total_injuries", f"Cases by type ({by_type}) must equal cases by outcome ({cases})")
    if t["H"] > 0 and t["K"] == 0:
        add("total_dafw_days", "Days-away cases (H) need days away (K)")
    if t["K"] > 0 and t["H"] == 0:
        add("total_dafw_cases", "Days away (K) need at least one days-away case (H)")
    if t["K"] < t["H"]:
        add("total_dafw_days", "Days away (K) must be at least the number of days-away cases (H)")
    if t["I"] > 0 and t["L"] == 0:
        add("total_djtr_days", "Restricted/transfer cases (I) need restricted days (L)")
    if t["L"] > 0 and t["H"] + t["I"] == 0:
        add("total_djtr_cases", "Restricted days (L) need a days-away or restricted case (H or I)")

    average, hours = item.annual_average_employees, item.total_hours
    missing_months = sorted(set(range(1, 13)) - {m for m, h in item.months.items() if h.hours is not None})
    if missing_months:
        add("total_hours_worked", f"Hours are missing for month(s) {', '.join(map(str, missing_months))}",
            "warning")
    uncounted = sorted(m for m, h in item.months.items() if h.hours and h.average_employees is None)
    if uncounted:
        # The 300A worksheet: the total number of employees paid in all pay
        # periods divided by the number of pay periods in the year, periods
        # with no employees included (counted as 0).
        add("annual_average_employees",
            f"Month(s) {', '.join(map(str, uncounted))} have hours but no employee count, and are left out "
            "of the annual average (the monthly counts added up, divided by the months that have one, "
            "rounded up). The 300A worksheet counts every pay period, those with no employees as 0: "
            "enter each month's count (0 when nobody was employed)", "warning")
    if not average:
        add("annual_average_employees", "Annual average employees must be greater than 0")
    else:
        if average >= 25_000:
            add("annual_average_employees", "Annual average employees should be below 25,000", "warning")
        if average <= cases:
            add("annual_average_employees",
                f"Annual average employees ({average}) should be greater than the case count ({cases})",
                "warning")
    if hours <= 0:
        add("total_hours_worked", "Total hours worked must be greater than 0")
    elif average:
        per_employee = hours / average
        if per_employee >= 8760:
            add("total_hours_worked", "Hours per employee must be below 8,760 (hours in a year)")
        elif per_employee <= 500:
            add("total_hours_worked", "Hours per employee should be above 500", "warning")

    for name in missing_establishment_fields(site):
        add(name, "Required for the electronic submission")
    if site.ein and not (site.ein.isdigit() and len(site.ein) == 9):
        add("ein", "The EIN must be 9 digits")
    if site.naics_code and not (site.naics_code.isdigit() and len(site.naics_code) == 6):
        add("naicsCode", "The NAICS code must be 6 digits")
    elif site.naics_code and site.naics_code not in naics_codes():
        add("naicsCode", f"{site.naics_code} is not a 6-digit industry of NAICS 2017 or 2022: check the code "
                         "(ITA takes 2012, 2017 and 2022 codes)", "warning")
    if site.state and site.state.upper() not in USPS_STATES:
        add("state", f"\"{site.state}\" is not a USPS code of a state or territory (such as MA, TX, PR)")
    if site.street_address and PO_BOX.search(site.street_address):
        add("streetAddress", "The street address must be where the establishment is, not a PO Box")
    if site.street_address and len(" ".join(site.street_address.split())) > STREET_LIMIT:
        add("streetAddress", f"ITA takes {STREET_LIMIT} characters of the street address: the rest is cut",
            "warning")
    if site.zip and not (site.zip.isdigit() and len(site.zip) in (5, 9)):
        add("zip", "The ZIP code must be 5 or 9 digits")
    if len(site.name) > 100:
        add("establishment_name", "The establishment name must be at most 100 characters")
    own = site.name.strip().lower()
    twins = [i for i, name in site_names if i != site.id and name.strip().lower() == own]
    if twins:
        add("establishment_name", "Each establishment needs a unique name (ITA matches rows by name)")
    if item.peak_employees is None:
        add("size", "The size code needs monthly employee counts")


