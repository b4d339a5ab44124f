"""Who must file what with OSHA electronically: 29 CFR 1904.41 as amended by
the final rule "Improve Tracking of Workplace Injuries and Illnesses",
88 FR 47254 (July 21, 2023), in force from January 1, 2024.

- (a)(1)(i): an establishment with 20 to 249 employees in an industry of
  Appendix A to Subpart E files the 300A;
- (a)(1)(ii): one with 250 or more employees, in any industry that keeps
  records, files the 300A;
- (a)(2): one with 100 or more employees in an industry of Appendix B to
  Subpart E also files the 300 and 301 case data;
- the size is the most people employed at any time in the calendar year
  (1904.41(b)(2)): the busiest month's count here (`SiteYear.peak_employees`);
- due March 2 of the year after the records' year (1904.41(c), `deadlines.ita_due`).

The appendices list industries by 2017 NAICS codes (sectors and 4-digit
industry groups) and are matched by prefix: a 6-digit code is in an
appendix when it starts with a code listed there.

Source of the two lists: Appendices A and B to Subpart E of Part 1904 as
amended by the final rule (88 FR 47254-47349, its amendatory text at the
end) and carried into the eCFR (29 CFR Part 1904, Subpart E, Appendices A
and B), in 2017 NAICS: Department Stores is 4522 and General Merchandise
Stores 4523 (2012: 4521 and 4529). The CFR page itself could not be opened
when this was written: the lists were written from the amended rule and
checked code for code against one public transcription that agrees with
them. Another widely copied list for Appendix B disagrees: it holds 2012
codes the amended appendix does not (3112, 3169, 3221, 3311, 4411, 4521,
4529, 6216) and leaves out codes it does (2213, 2381, 5322). Check the
lists against the eCFR when OSHA amends the appendices.

Partially exempt industries (1904.2, Appendix A to Subpart B) and
establishments of 10 or fewer employees (1904.1) keep no records unless
asked: the service assumes a site it keeps records for is one that must.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

from ehs_plugins.osha.deadlines import ita_due
from ehs_plugins.osha.log import SiteYear

# Appendix A to Subpart E: sectors 11, 22, 23, 31-33 and 42, and these industry groups.
APPENDIX_A = frozenset("""
    11 22 23 31 32 33 42
    4413 4421 4422 4441 4442 4451 4452 4522 4523 4533 4542 4543
    4811 4841 4842 4851 4852 4853 4854 4855 4859 4871 4881 4882 4883 4884 4889
    4911 4921 4922 4931 5152 5311 5321 5322 5323 5617 5621 5622 5629
    6219 6221 6222 6223 6231 6232 6233 6239 6242 6243
    7111 7112 7121 7131 7132 7211 7212 7223 8113 8123
""".split())

# Appendix B to Subpart E: industry groups only.
APPENDIX_B = frozenset("""
    1111 1112 1113 1114 1119 1121 1122 1123 1129 1133 1141 1142 1151 1152 1153
    2213 2381
    3111 3113 3114 3115 3116 3117 3118 3119 3121 3161 3162 3211 3212 3219 3261 3262
    3271 3272 3273 3279 3312 3314 3315 3321 3323 3324 3325 3326 3327 3328 3331 3335
    3361 3362 3363 3366 3371 3372 3379
    4231 4233 4235 4239 4244 4248
    4413 4422 4441 4442 4451 4522 4523 4533 4543
    4811 4841 4842 4851 4852 4853 4854 4859 4871 4881 4883 4889 4911 4921 4931
    5322 5621 5622
    6219 6221 6222 6223 6231 6232 6233 6239 6243
    7111 7112 7131 7211 7212 7223
""".split())

FORM_300A, CASE_DATA = "300A", "300_301"


def listed_in(naics: str | None, appendix: frozenset[str]) -> str | None:
    """The code of `appendix` that `naics` falls under (its longest listed prefix), or None."""
    if not naics:
        return None
    for length in (4, 3, 2):
        if naics[:length] in appendix:
            return naics[:length]
    return None


@dataclass(frozen=True)
class Requirement:
    requires: list[str]
    reason: str


def requirement(naics: str | None, peak: int | None, year: int) -> Requirement:
    """What an establishment of this industry and size must file for `year`'s records."""
    if peak is None:
        return Requirement([], f"No monthly employee counts for {year}: enter them to know what must be "
                               "filed (1904.41 counts the most employees at any time in the year)")
    in_a, in_b = listed_in(naics, APPENDIX_A), listed_in(naics, APPENDIX_B)
    reasons: list[str] = []
    requires: list[str] = []
    size = f"{peak} employees at the busiest time of {year}"
    if peak >= 250:
        requires.append(FORM_300A)
        reasons.append(f"{size}, 250 or more in any industry: the 300A (1904.41(a)(1)(ii))")
    elif peak >= 20 and in_a:
        requires.append(FORM_300A)
        reasons.append(f"{size}, 20 to 249 in NAICS {in_a}, an industry of Appendix A to Subpart E: "
                       "the 300A (1904.41(a)(1)(i))")
    if peak >= 100 and in_b:
        if FORM_300A not in requires:
            requires.append(FORM_300A)
        requires.append(CASE_DATA)
        reasons.append(f"100 or more employees in NAICS {in_b}, an industry of Appendix B to Subpart E: "
                       "the 300 and 301 case data as well (1904.41(a)(2))")
    if not naics and peak >= 20:
        reasons.append("No NAICS code for the site: Appendices A and B cannot be checked; add it")
    if not requires:
        if peak < 20:
            reasons.append(f"{size}, fewer than 20: no electronic submission unless OSHA asks "
                           "(1904.41(a)(3))")
        elif naics:
            reasons.append(f"{size}; NAICS {naics} is in neither Appendix A nor B to Subpart E, and fewer "
                           "than 250: no electronic submission unless OSHA asks (1904.41(a)(3))")
    return Requirement(requires, "; ".join(reasons))


def due_by(requires: list[str], year: int) -> dt.date | None:
    return ita_due(year) if requires else None


def coverage(items: list[SiteYear]) -> list[dict[str, Any]]:
    """For each site-year (its months loaded): `{siteId, siteName, naicsCode,
    peakEmployees, requires, reason, dueBy}` (GET /api/osha/ita/coverage)."""
    found = []
    for item in items:
        peak = item.peak_employees
        needed = requirement(item.site.naics_code, peak, item.year)
        due = due_by(needed.requires, item.year)
        found.append({"siteId": item.site.id, "siteName": item.site.name, "naicsCode": item.site.naics_code,
                      "peakEmployees": peak, "requires": needed.requires, "reason": needed.reason,
                      "dueBy": due.isoformat() if due else None})
    return found
