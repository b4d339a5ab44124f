"""Who must file what with OSHA (29 CFR 1904.41 as amended in 2023): by NAICS
prefix (Appendices A and B to Subpart E) and the most employees at any time
in the year; due 2 March of the next year (1904.41(c))."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest

from ehs_plugins.osha.coverage import APPENDIX_A, APPENDIX_B, requirement
from ehs_plugins.osha.pages.cards import ita_warning
from tests.plugins.osha import OSHA, YEAR, full_year, new_site, put_hours

A, B = "300A", "300_301"

# (NAICS, peak employees, requires): 1904.41(a)(1)(i), (a)(1)(ii), (a)(2).
TABLE = [
    ("336390", 19, []),  # manufacturing, under 20
    ("336390", 20, [A]),  # 31-33 is in Appendix A: 20-249 -> 300A
    ("336390", 99, [A]),
    ("336390", 100, [A, B]),  # 3363 is in Appendix B: 100+ -> case data too
    ("336390", 249, [A, B]),
    ("336390", 250, [A, B]),
    ("541110", 249, []),  # law offices: in neither appendix, under 250
    ("541110", 250, [A]),  # 250+ anywhere -> 300A
    ("541110", 5000, [A]),
    ("622110", 20, [A]),  # hospitals: 6221 in A and B
    ("622110", 150, [A, B]),
    ("452210", 120, [A, B]),  # 2017 department stores: 4522 in A and B
    ("452111", 120, []),  # 2012 department stores (4521): not a code of the amended appendices
    ("455110", 120, []),  # 2022 department stores (4551) match no 2017 code of the appendices
    ("221310", 120, [A, B]),  # water supply: 22 in A, 2213 in B
    ("238110", 100, [A, B]),  # foundation contractors: 23 in A, 2381 in B
    ("238210", 100, [A]),  # electrical contractors: 23 in A, 2382 not in B
    ("532210", 100, [A, B]),  # consumer goods rental: 5322 in A and B
    ("311211", 150, [A]),  # flour milling: 31 in A; 3112 is not in B
    ("441110", 150, []),  # new car dealers: 4411 in neither
    ("441310", 150, [A, B]),  # auto parts stores: 4413 in A and B
    ("493110", 20, [A]),  # warehousing
    ("493110", 100, [A, B]),
    ("423610", 150, [A]),  # 42 in A; 4236 not in B
    ("424410", 150, [A, B]),  # 4244 in B
    ("713110", 100, [A, B]),  # amusement parks
    ("713210", 100, [A]),  # casinos: 7132 in A only
    (None, 250, [A]),  # 250+ needs no code
    (None, 150, []),  # the appendices need the code
]


@pytest.mark.parametrize(("naics", "peak", "requires"), TABLE)
def test_coverage_by_naics_prefix_and_size(naics: str | None, peak: int, requires: list[str]) -> None:
    found = requirement(naics, peak, YEAR)
    assert found.requires == requires
    assert found.reason


def test_reasons_cite_the_appendix_and_paragraph() -> None:
    both = requirement("336390", 120, YEAR).reason
    assert "NAICS 3363" in both and "Appendix B to Subpart E" in both and "1904.41(a)(2)" in both
    small = requirement("336390", 50, YEAR).reason
    assert "Appendix A to Subpart E" in small and "1904.41(a)(1)(i)" in small and "NAICS 33" in small
    big = requirement("541110", 300, YEAR).reason
    assert "250 or more" in big and "1904.41(a)(1)(ii)" in big
    none = requirement("541110", 30, YEAR).reason
    assert "neither Appendix A nor B" in none
    assert "No monthly employee counts" in requirement("336390", None, YEAR).reason


def test_appendix_b_is_industry_groups_within_appendix_a_or_manufacturing() -> None:
    """Appendix B lists 4-digit industry groups; each is also covered by Appendix A (the 300A tier)."""
    assert all(len(code) == 4 for code in APPENDIX_B)
    for code in APPENDIX_B:
        assert code[:2] in APPENDIX_A or code in APPENDIX_A, code


def test_coverage_api(manager: Any, site: int) -> None:
    """GET /api/osha/ita/coverage: each active site, due 2 March of the next year."""
    put_hours(manager, site, [{"month": 1, "hours": 9000, "averageEmployees": 60},
                              {"month": 7, "hours": 20_000, "averageEmployees": 130.4}])
    office = new_site(manager, "Head Office", naicsCode="541110")
    put_hours(manager, office, full_year(3000, 20))
    unknown = new_site(manager, "New Depot", establishment=False)
    found = {c["siteId"]: c for c in manager.get(f"{OSHA}/ita/coverage", {"year": YEAR}, status=200).json}
    assert set(found) >= {site, office, unknown}
    plant = found[site]
    assert plant == {"siteId": site, "siteName": "Plant North", "naicsCode": "336390", "peakEmployees": 131,
                     "requires": [A, B], "reason": plant["reason"], "dueBy": f"{YEAR + 1}-03-02"}
    assert found[office]["requires"] == [] and found[office]["dueBy"] is None
    assert found[unknown]["peakEmployees"] is None and found[unknown]["requires"] == []


def test_coverage_api_validates_the_year(manager: Any, site: int) -> None:
    assert manager.get(f"{OSHA}/ita/coverage", {"year": "20x5"}, status=400).json["issues"]
    assert manager.get(f"{OSHA}/ita/coverage", status=400).json["issues"]


def test_coverage_is_for_safety_managers(make_user: Any, site: int) -> None:
    supervisor = make_user("supervisor")
    supervisor.get(f"{OSHA}/ita/coverage", {"year": YEAR}, status=403)


def test_the_submission_page_shows_who_must_file(manager: Any, site: int) -> None:
    put_hours(manager, site, full_year(20_000, 120))
    page = manager.get("/osha/submission", {"year": YEAR}, status=200).text
    assert "Who must file what" in page and "300 and 301 case data" in page
    assert "Appendix B to Subpart E" in page


@pytest.mark.parametrize(("today", "due"), [
    (dt.date(2026, 1, 1), dt.date(2026, 3, 2)),  # 60 days before
    (dt.date(2026, 3, 2), dt.date(2026, 3, 2)),  # the day itself
    (dt.date(2025, 12, 31), None),  # 61 days before: no warning yet
    (dt.date(2026, 3, 3), None),  # passed: next year's is far
    (dt.date(2026, 11, 28), None),
])
def test_home_warns_as_the_date_nears(today: dt.date, due: dt.date | None) -> None:
    """1904.41(c): the home card appears within 60 days of 2 March."""
    warning = ita_warning(today)
    assert (warning["due"] if warning else None) == due
