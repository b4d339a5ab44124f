"""Injured or ill people by part of the body (issue #39 item 5): the OSHA
plugin hands its coded cases to the analytics plugin through
`add_injury_figures(body_parts=…)`; `byBodyPart` counts the cases on the
period's incidents, most first, the uncoded last, for safety managers only
(injury-record data), and the dashboard draws them as a chart with its
numbers in a table."""

from __future__ import annotations

import pytest

from ehs_core.testing import new_site
from tests.plugins.analytics import add_case, analytics, report


@pytest.fixture
def coded(admin):
    """Plant North, March 2024: three hands (two on one incident), an eye,
    one case not coded yet; a near miss. Outside the period (February)
    another hand; Plant South, March: a foot."""
    north = new_site(admin, "Plant North")["id"]
    south = new_site(admin, "Plant South")["id"]
    pressed = report(admin, north, "2024-03-05T10:00:00+00:00", "injury")
    add_case(admin, pressed, name="Ann One", bodyPartCode="44")
    add_case(admin, pressed, name="Bob Two", bodyPartCode="44", bodyPart="Right palm")
    add_case(admin, report(admin, north, "2024-03-12T10:00:00+00:00", "injury"), bodyPartCode="44")
    add_case(admin, report(admin, north, "2024-03-20T10:00:00+00:00", "illness"), bodyPartCode="12")
    add_case(admin, report(admin, north, "2024-03-25T10:00:00+00:00", "injury"))
    report(admin, north, "2024-03-26T10:00:00+00:00", "near_miss")
    add_case(admin, report(admin, north, "2024-02-10T10:00:00+00:00", "injury"), bodyPartCode="44")
    add_case(admin, report(admin, south, "2024-03-08T10:00:00+00:00", "injury"), bodyPartCode="54")
    return {"north": north, "south": south}


def test_cases_are_counted_by_body_part(make_user, coded):
    manager = make_user("safety_manager")
    body = analytics(manager, "2024-03-01", "2024-03-31")
    assert body["byBodyPart"] == [
        {"code": "44", "title": "Hand(s), except finger(s)", "count": 3},
        {"code": "12", "title": "Eye(s)", "count": 1},
        {"code": "54", "title": "Foot (feet), except toe(s)", "count": 1},
        {"code": None, "title": None, "count": 1},
    ]
    # The filters apply: one site, one type.
    north = analytics(manager, "2024-03-01", "2024-03-31", siteId=coded["north"], type="injury")
    assert [(p["code"], p["count"]) for p in north["byBodyPart"]] == [("44", 3), (None, 1)]
    february = analytics(manager, "2024-02-01", "2024-02-29")
    assert [(p["code"], p["count"]) for p in february["byBodyPart"]] == [("44", 1)]
    assert analytics(manager, "2023-01-01", "2023-01-31")["byBodyPart"] == []


@pytest.mark.parametrize("role", ["supervisor", "reporter"])
def test_only_record_keepers_get_body_parts(make_user, coded, role):
    assert "byBodyPart" not in analytics(make_user(role), "2024-03-01", "2024-03-31")


def test_the_dashboard_charts_body_parts_with_a_table(make_user, coded):
    page = make_user("safety_manager").get("/analytics", {"from": "2024-03-01", "to": "2024-03-31"})
    section = page.html.find("section", attrs={"aria-labelledby": "body-title"})
    assert section.find("h2").get_text() == "Injuries and illnesses by part of the body"
    assert section.find("svg", id="body-chart") is not None
    rows = [(row.th.get_text(), row.td.get_text()) for row in section.find("table").tbody.find_all("tr")]
    assert rows == [("Hand(s), except finger(s)", "3"), ("Eye(s)", "1"), ("Foot (feet), except toe(s)", "1"),
                    ("Not coded yet", "1")]
    supervisor_page = make_user("supervisor").get("/analytics", {"from": "2024-03-01", "to": "2024-03-31"})
    assert "by part of the body" not in supervisor_page.text
