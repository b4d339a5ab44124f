"""The analytics dashboard page (/analytics): the overview, the period and
the one before, charts drawn on the server as SVG with their numbers in a
table, bars that open the incident list with their filter, and the API's
rules on who sees what: rates for supervisors and above, recordable-case
figures only for safety managers."""

from __future__ import annotations

import re
from urllib.parse import parse_qs, urlsplit

from ehs_core.testing import new_site
from tests.plugins.analytics import add_case, day, midnight, put_hours, report


def fill(admin):
    site = new_site(admin, "Plant North")["id"]
    first = report(admin, site, midnight(day(-3)), type="injury", severity="high")
    report(admin, site, midnight(day(-2)), type="near_miss")
    report(admin, site, midnight(day(-2)), type="near_miss")
    return site, first


def test_the_dashboard_draws_charts_with_their_numbers(make_user, admin):
    fill(admin)
    supervisor = make_user("supervisor")
    page = supervisor.get("/analytics", {"period": "30"})
    assert page.content_type == "text/html"
    assert "<script" not in page.text.split("</head>")[1]  # no chart script
    assert ' style="' not in page.text  # the CSP refuses inline styles
    assert page.text.count("<svg class=\"chart\"") >= 6
    assert "Incidents by type and severity" in page.text and "Previous period:" in page.text
    # A type's bar is a link to the list with that filter and the period.
    link = re.search(r'<a href="([^"]+)" aria-label="Near miss: 2 incidents">', page.text)
    assert link is not None
    query = parse_qs(urlsplit(link.group(1).replace("&amp;", "&")).query)
    assert query["type"] == ["near_miss"] and query["from"] == [day(-29).isoformat()]
    listed = supervisor.get(link.group(1).replace("&amp;", "&"))
    assert listed.text.count("near-miss") + listed.text.count("Near miss") >= 2
    assert "Injury rates" in page.text  # supervisors see the rates …
    assert "Recordable cases" not in page.text  # … never the case figures


def test_only_safety_managers_see_recordable_cases(make_user, admin):
    site, number = fill(admin)
    manager = make_user("safety_manager")
    add_case(manager, number, workRelated=True, newCase=True, medicalTreatment=True)
    put_hours(manager, site, day(0).year, {day(0).month: 2000})
    assert "Recordable cases" in manager.get("/analytics", {"period": "30"}).text
    reporter = make_user("reporter")
    page = reporter.get("/analytics", {"period": "30"})
    assert "Injury rates" not in page.text and "Recordable cases" not in page.text


def test_a_bad_period_is_shown_next_to_the_fields(make_user):
    supervisor = make_user("supervisor")
    page = supervisor.get("/analytics", {"from": "2024-05-01", "to": "2024-01-01"}, status=400)
    assert "Must not be before from" in page.text and 'href="#to"' in page.text
    page = supervisor.get("/analytics", {"from": "2020-01-01", "to": "2024-01-01"}, status=400)
    assert "at most 3 years" in page.text


def test_the_menu_has_analytics(make_user):
    page = make_user("reporter").get("/")
    assert 'href="/analytics"' in page.text


def test_a_root_cause_category_is_shown_as_the_investigator_typed_it(make_user, admin):
    _, number = fill(admin)
    for step in ("triage", "investigation"):
        admin.post_json(f"/api/incidents/{number}/transitions", {"to": step})
    admin.post_json(f"/api/incidents/{number}/root-causes",
                    {"category": "People / PPE", "description": "No gloves", "whys": ["None at hand"]})
    page = make_user("supervisor").get("/analytics", {"period": "30"})
    assert "People / PPE" in page.text and "People / ppe" not in page.text


def test_a_shared_address_of_an_archived_or_unknown_site_says_so_and_never_fails(make_user, admin):
    """`/analytics?siteId=` of a site archived since (a shared view of it)
    or of no site was a 500 for supervisors and above. An archived site's
    figures are still shown, the site chosen in the form; no site is a 400
    in the form's error summary."""
    site, _ = fill(admin)
    supervisor = make_user("supervisor")
    before = supervisor.get("/analytics", {"period": "30", "siteId": site}, status=200)
    admin.patch_json(f"/api/sites/{site}", {"archived": True}, status=200)
    for who in (supervisor, admin):
        page = who.get("/analytics", {"period": "30", "siteId": site}, status=200)
        rates = page.html.find("caption", string=lambda text: "Injury rates" in text)
        assert rates.text.endswith("Plant North")
        assert page.html.find("select", id="siteId").find("option", selected=True).text == "Plant North"
        assert [c.text for c in page.html.find_all("caption")] == [
            c.text for c in before.html.find_all("caption")]
        for site_id in (99999, "abc", "1" * 30, "-1"):
            refused = who.get("/analytics", {"period": "30", "siteId": site_id}, status=400)
            assert refused.html.find("div", id="error-summary").find("a", href="#siteId"), site_id
        assert "There is no such site" in who.get("/analytics", {"siteId": 99999}, status=400).text


def test_places_name_each_area_by_its_path_before_its_site(make_user, admin):
    """Issue #36 item 7: sub-areas of one name under different parents, at
    a site with a long name, read apart in the chart and its table."""
    from ehs_core.testing import new_area

    site = new_site(admin, "North Distribution Center of the Company")["id"]
    for parent_name in ("Building A", "Building B"):
        parent = new_area(admin, site, parent_name)
        yard = new_area(admin, site, "Yard", parentId=parent["id"])
        report(admin, site, midnight(day(-2)), areaId=yard["id"])
    from html import unescape

    text = unescape(make_user("supervisor").get("/analytics", {"period": "30"}).text)
    for parent_name in ("Building A", "Building B"):
        assert f">{parent_name} / Yard · North Distribution Center of the Company<" in text  # the table
        assert f">{parent_name} / Yard · North...<" in text  # the chart's label, cut where it differs no more
