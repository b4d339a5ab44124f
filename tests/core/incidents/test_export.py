"""CSV export of the incident list: RFC 4180 output, neutralised formulas,
and the list's filters and visibility."""

from __future__ import annotations

import csv
import io
from urllib.parse import urlencode

import pytest

from tests.core.incidents import (
    INCIDENTS,
    OCCURRED,
    add_action,
    file_report,
    issue_paths,
    listing,
    move,
    new_area,
    new_site,
)

EXPORT = f"{INCIDENTS}/export"
HEADER = ["reference", "title", "type", "severity", "status", "occurredAt", "site", "area",
          "locationDetail", "description", "immediateAction", "reporter", "createdAt", "closedAt",
          "reportedThrough"]


def export(browser, params=None, status=200):
    query = f"?{urlencode(params)}" if params else ""
    return browser.get(f"{EXPORT}{query}", status=status)


def text_of(response) -> str:
    return response.body.decode("utf-8").removeprefix("\ufeff")


def rows(response) -> list[dict[str, str]]:
    """Parse the CSV as RFC 4180 (csv module, newline handling off)."""
    parsed = list(csv.reader(io.StringIO(text_of(response), newline="")))
    assert parsed[0] == HEADER
    return [dict(zip(HEADER, row, strict=True)) for row in parsed[1:]]


def references(browser, **params) -> list[str]:
    return [row["reference"] for row in rows(export(browser, params))]


# --- format ------------------------------------------------------------------------


def test_the_export_is_a_csv_download(admin):
    site = new_site(admin)
    file_report(admin, site["id"])
    response = export(admin)
    assert response.content_type == "text/csv"
    assert response.charset.lower() == "utf-8"
    assert "attachment" in response.headers["Content-Disposition"]
    assert response.headers["X-Content-Type-Options"] == "nosniff"


def test_an_empty_export_is_just_the_header(admin):
    response = export(admin)
    assert text_of(response) == ",".join(HEADER) + "\r\n"


def test_rows_hold_the_incident_fields(admin, make_user):
    site = new_site(admin)
    area = new_area(admin, site["id"], "Assembly")
    reporter = make_user("reporter", name="Rita Reporter")
    file_report(reporter, site["id"], areaId=area["id"], title="Oil on the floor", type="hazard",
                severity="medium", locationDetail="Dock 3", description="Puddle",
                immediateAction="Coned off")
    file_report(reporter, site["id"], anonymous=True, title="Anonymous")
    anonymous, named = rows(export(admin))
    assert named == named | {
        "reference": "INC-0001", "title": "Oil on the floor", "type": "hazard", "severity": "medium",
        "status": "reported", "occurredAt": OCCURRED, "site": "Plant North", "area": "Assembly",
        "locationDetail": "Dock 3", "description": "Puddle", "immediateAction": "Coned off",
        "reporter": "Rita Reporter", "closedAt": ""}
    assert named["createdAt"]
    assert (anonymous["reference"], anonymous["reporter"], anonymous["area"]) == ("INC-0002", "", "")


def test_records_end_with_crlf_and_special_characters_are_quoted(admin):
    site = new_site(admin)
    file_report(admin, site["id"], title='He said "stop"', description="line one\nline two",
                locationDetail="Dock 3, east side")
    text = text_of(export(admin))
    assert text.startswith(",".join(HEADER) + "\r\n")
    assert text.endswith("\r\n")
    assert '"He said ""stop"""' in text
    assert '"line one\nline two"' in text
    assert '"Dock 3, east side"' in text
    # Outside quoted fields every record ends with CRLF, never a bare LF.
    assert text.count("\r\n") == 2
    row = rows(export(admin))[0]
    assert row["title"] == 'He said "stop"'
    assert row["description"] == "line one\nline two"
    assert row["locationDetail"] == "Dock 3, east side"


def test_the_body_starts_with_a_utf8_bom_and_keeps_non_ascii_text(admin):
    site = new_site(admin, "Werk Süd")
    file_report(admin, site["id"], title="Ölfleck — Halle 2")
    response = export(admin)
    assert response.body.startswith("\ufeff".encode())
    row = rows(response)[0]
    assert (row["title"], row["site"]) == ("Ölfleck — Halle 2", "Werk Süd")


@pytest.mark.parametrize("title", ["=1+2", "+1", "-1", "@SUM(A1:A9)", "=HYPERLINK(\"http://x\",\"y\")"])
def test_formulas_are_neutralised(admin, title):
    site = new_site(admin)
    file_report(admin, site["id"], title=title)
    assert rows(export(admin))[0]["title"] == "'" + title


def test_formulas_are_neutralised_in_every_text_column(admin):
    site = new_site(admin, "=Site")
    area = new_area(admin, site["id"], "+Area")
    file_report(admin, site["id"], areaId=area["id"], title="Safe", locationDetail="-Loc",
                description="@Desc", immediateAction="=cmd|' /C calc'!A0")
    row = rows(export(admin))[0]
    assert row["title"] == "Safe"
    assert (row["site"], row["area"], row["locationDetail"], row["description"]) == \
        ("'=Site", "'+Area", "'-Loc", "'@Desc")
    assert row["immediateAction"] == "'=cmd|' /C calc'!A0"


def test_text_that_only_contains_formula_characters_is_left_alone(admin):
    site = new_site(admin)
    file_report(admin, site["id"], title="Score 1+2=3 @ dock - east")
    assert rows(export(admin))[0]["title"] == "Score 1+2=3 @ dock - east"


def test_the_export_needs_a_session(admin, client):
    assert list(export(client, status=401).json) == ["error"]


# --- filters and visibility ---------------------------------------------------------------


def test_the_export_is_newest_first_and_not_paged(admin):
    site = new_site(admin)
    for _ in range(3):
        file_report(admin, site["id"])
    assert references(admin) == ["INC-0003", "INC-0002", "INC-0001"]
    assert references(admin, pageSize=1, page=2) == ["INC-0003", "INC-0002", "INC-0001"]


def test_the_export_is_in_the_lists_order(admin):
    site = new_site(admin)
    for severity in ("low", "critical", "high"):
        file_report(admin, site["id"], severity=severity)
    assert references(admin, sort="oldest") == ["INC-0001", "INC-0002", "INC-0003"]
    assert references(admin, sort="severity") == ["INC-0002", "INC-0003", "INC-0001"]
    assert export(admin, {"sort": "name"}, status=400).json["issues"][0]["path"] == "sort"


def test_the_export_takes_the_list_filters(admin):
    north = new_site(admin, "Plant North")
    south = new_site(admin, "Plant South")
    file_report(admin, north["id"], type="hazard", severity="low", title="Forklift")     # 1
    file_report(admin, north["id"], type="injury", severity="high", title="Cut hand")   # 2
    file_report(admin, south["id"], type="injury", severity="critical", title="Fall")   # 3
    move(admin, 3, "triage")
    assert references(admin, type="injury") == ["INC-0003", "INC-0002"]
    assert references(admin, severity="high") == ["INC-0002"]
    assert references(admin, status="triage") == ["INC-0003"]
    assert references(admin, siteId=north["id"]) == ["INC-0002", "INC-0001"]
    assert references(admin, q="forklift") == ["INC-0001"]
    assert references(admin, q="INC-0002") == ["INC-0002"]
    assert references(admin, q="%") == []
    assert references(admin, type="injury", siteId=south["id"]) == ["INC-0003"]


def test_the_export_of_a_search_has_every_match_however_many_the_list_counts(admin, monkeypatch):
    from ehs_core.incidents import listing as operations
    monkeypatch.setattr(operations, "COUNT_BOUND", 2)
    site = new_site(admin)
    for n in range(1, 8):
        file_report(admin, site["id"], title=f"Forklift {n}" if n != 4 else "Ladder")
    assert listing(admin, "?q=forklift").json["total"] == 6  # one page: the exact count
    assert references(admin, q="forklift") == [f"INC-{n:04d}" for n in (7, 6, 5, 3, 2, 1)]


@pytest.mark.parametrize(("params", "path"), [
    ({"type": "fire"}, "type"), ({"severity": "extreme"}, "severity"), ({"status": "open"}, "status"),
    ({"siteId": "north"}, "siteId"), ({"pageSize": "0"}, "pageSize")])
def test_bad_export_filters_are_400(admin, params, path):
    assert issue_paths(export(admin, params, status=400)) == {path}


def test_the_export_shows_a_reporter_only_what_they_may_see(admin, make_user):
    site = new_site(admin)
    alice = make_user("reporter")
    bob = make_user("reporter")
    file_report(alice, site["id"], title="Alice")                     # 1
    file_report(bob, site["id"], title="Bob")                         # 2
    file_report(admin, site["id"], title="Assigned to Alice")         # 3
    file_report(alice, site["id"], title="Alice anonymous", anonymous=True)  # 4
    add_action(admin, 3, alice.user["id"])
    assert references(alice) == ["INC-0003", "INC-0001"]
    assert references(bob) == ["INC-0002"]
    assert references(alice, q="Bob") == []
    assert references(make_user("supervisor")) == ["INC-0004", "INC-0003", "INC-0002", "INC-0001"]


# --- the pages' download (issue #36 item 7) ------------------------------------------


def test_the_pages_download_is_in_words_and_every_time_in_the_sites_zone(admin):
    """The list's "Export these as CSV" is for people: headings and types,
    severities and statuses in words, not the API's codes (`near_miss`);
    every time in the site's zone, named in a column, where the API's
    cells mixed the report's offset and UTC."""
    import datetime as dt
    from zoneinfo import ZoneInfo

    site = new_site(admin, "Plant West", timezone="America/Los_Angeles")["id"]
    number = file_report(admin, site, type="near_miss", severity="high",
                         occurredAt="2026-03-01T08:15:00-08:00")["number"]
    listed = admin.get("/incidents")
    assert "/incidents/export.csv" in listed.text
    response = admin.get("/incidents/export.csv")
    assert response.content_type == "text/csv"
    [row] = csv.DictReader(io.StringIO(text_of(response), newline=""))
    assert row["Reference"] == f"INC-{number:04d}"
    assert (row["Type"], row["Severity"], row["Status"]) == ("Near miss", "High", "Reported")
    assert row["Occurred (site time)"] == "2026-03-01 08:15"
    assert row["Time zone"] == "America/Los_Angeles"
    created = admin.get(f"{INCIDENTS}/{number}").json["createdAt"]
    local = dt.datetime.fromisoformat(created.replace("Z", "+00:00")).astimezone(
        ZoneInfo("America/Los_Angeles"))
    assert row["Reported (site time)"] == f"{local:%Y-%m-%d %H:%M}"
    # The API's own export keeps its codes for programs.
    [api_row] = rows(export(admin))
    assert (api_row["type"], api_row["severity"]) == ("near_miss", "high")


def test_the_pages_download_keeps_the_lists_filters(admin):
    site = new_site(admin)["id"]
    for kind in ("hazard", "injury"):
        file_report(admin, site, type=kind)
    response = admin.get("/incidents/export.csv?type=hazard")
    assert [r["Type"] for r in csv.DictReader(io.StringIO(text_of(response), newline=""))] == ["Hazard"]
