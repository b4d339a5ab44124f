"""The submission page's ITA checks read every case's totals but check only
the cases that may have a finding (`checks.may_find`, issue #42 item 2):
they find exactly what `checks` finds on the whole log, in the same order."""

from __future__ import annotations

from typing import Any

from ehs_core import testing
from tests.plugins.osha import FORM_301, WORK, YEAR, new_case, new_incident, new_site

LONG = "The ram came down on the blank while the guard was open and " * 6  # over ITA's 255


def fill(manager: Any, site: int) -> None:
    """A site-year whose cases have every kind of finding, and plain ones."""
    area = testing.new_area(manager, site, "Bay 7")["id"]
    plain = new_incident(manager, site)["number"]
    new_case(manager, plain, "Paula Plain", **WORK, **FORM_301, medicalTreatment=True)
    new_case(manager, plain, "Oscar Other", **WORK, **FORM_301, daysAwayFromWork=True, daysAway=4)
    # Digits one or two per text, three in the row together (an identifier may be).
    spread = new_incident(manager, site, locationDetail="Dock 4", areaId=area)["number"]
    new_case(manager, spread, "Dan Digits", **WORK, **{**FORM_301, "jobTitle": "Operator 2",
                                                       "whatHappened": "Slipped on step 9"},
             medicalTreatment=True)
    # The area's digit only when there is no location (column E).
    in_area = new_incident(manager, site, areaId=area)["number"]
    new_case(manager, in_area, "Anna Area", **WORK, **{**FORM_301, "jobTitle": "Operator 2"},
             medicalTreatment=True)
    texts = new_incident(manager, site)["number"]
    social = "Sam Social, SSN 123-45-6789"
    new_case(manager, texts, "Sam Social", **WORK, **{**FORM_301, "whatHappened": social},
             medicalTreatment=True)
    new_case(manager, texts, "Rex Refused", **WORK, **{**FORM_301, "objectSubstance": "Forklift (reversing)"},
             medicalTreatment=True)
    new_case(manager, texts, "Lena Long", **WORK, **{**FORM_301, "whatHappened": LONG}, medicalTreatment=True)
    new_case(manager, texts, "Jörg Müller", **WORK, **{**FORM_301, "jobTitle": "Prüfer"},
             medicalTreatment=True)
    new_case(manager, texts, "Cody Code", **WORK, **{**FORM_301, "bodyPart": None}, bodyPartCode="10",
             medicalTreatment=True)
    coded = new_incident(manager, site, title="Mail me at a@b.example")["number"]
    new_case(manager, coded, "Dora Dead", **WORK, **FORM_301, died=True)
    new_case(manager, coded, "Zeke Zero", **WORK, **FORM_301, daysAwayFromWork=True, daysAway=0)
    new_case(manager, coded, "Rita Rest", **WORK, **FORM_301, restrictedOrTransfer=True, daysRestricted=0)
    other_year = new_incident(manager, site, occurred_at=f"{YEAR - 1}-06-01T09:00:00-05:00")["number"]
    new_case(manager, other_year, "Olga Old", **WORK, **FORM_301, died=True)


def both(dbsession: Any, registry: Any, site_id: int) -> tuple[list, list, int]:
    from ehs_core.sites.models import Site
    from ehs_plugins.osha.checks import checks, site_year_checks
    from ehs_plugins.osha.log import LOG_COLUMNS, load
    site = dbsession.get(Site, site_id)
    names = [(site.id, site.name)]
    whole = load(dbsession, registry, [site], YEAR, LOG_COLUMNS)[0]
    item, found = site_year_checks(dbsession, registry, site, YEAR, names, "Acme")
    assert len(item.cases) == len(whole.cases) and dict(item.totals) == dict(whole.totals)
    return checks(whole, names, "Acme"), found, len(whole.cases)


def test_the_page_finds_what_the_whole_log_check_finds(manager: Any, site: int, dbsession: Any,
                                                        registry: Any) -> None:
    from ehs_core.sites.models import Site
    from ehs_plugins.osha.checks import may_find
    from ehs_plugins.osha.log import LOG_COLUMNS, load
    fill(manager, site)
    plain, fast, count = both(dbsession, registry, site)
    assert fast == plain
    assert {f["caseNumber"] for f in plain if f["caseId"]} and count == 12
    # The plain cases are not read: "Paula Plain", "Oscar Other" and "Anna Area" (one digit in the row).
    checked = load(dbsession, registry, [dbsession.get(Site, site)], YEAR, LOG_COLUMNS,
                   may_find(dbsession.get(Site, site)))[0].cases
    names = {case.name for case, _ in checked}
    assert not names & {"Paula Plain", "Oscar Other", "Anna Area"} and len(names) == 9
    page = manager.get("/osha/submission", {"year": YEAR}, status=200).text
    assert "123-45-6789" not in page and "social security number" in page


def test_a_site_whose_name_has_digits_has_every_case_read(manager: Any, dbsession: Any,
                                                           registry: Any) -> None:
    site = new_site(manager, "Plant 4-17", timezone="America/Chicago")
    fill(manager, site)
    plain, fast, _ = both(dbsession, registry, site)
    assert fast == plain
