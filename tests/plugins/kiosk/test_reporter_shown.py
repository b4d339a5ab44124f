"""Issue #36 item 5: a report filed through a reporting link shows the name
its reporter typed and the link's name on the incident page, in its history
and in both CSV exports; one filed with no name reads as anonymous, through
the link. The core knows the link only through `add_reporter_source`."""

from __future__ import annotations

import csv
import io

from tests.plugins.kiosk.support import file_report, new_link, new_site, report_body


def rows(response) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(response.body.decode("utf-8").removeprefix("\ufeff"), newline="")))


def filed(admin, client, **extra) -> str:
    site = new_site(admin)
    link = new_link(admin, "Gate tablet", site)
    body = report_body(site, title="Pallet at the exit", **extra)
    return file_report(client, link["token"], body).json["reference"][4:]


def test_the_reporters_typed_name_and_the_link_show_on_the_page_history_and_exports(admin, client):
    number = filed(admin, client, reporterName="Kim Kiosk")
    page = admin.get(f"/incidents/{number}").text
    facts = page.split('id="facts-title"', 1)[1].split("</dl>", 1)[0]
    assert "Kim Kiosk" in facts and "through the reporting link “Gate tablet”" in facts
    history = page.split('id="timeline"', 1)[1]
    assert "Kim Kiosk, through the reporting link “Gate tablet”" in history
    assert "Anonymous" not in history
    [row] = rows(admin.get("/api/incidents/export"))
    assert row["reporter"] == "Kim Kiosk" and row["reportedThrough"] == "the reporting link “Gate tablet”"
    [row] = rows(admin.get("/incidents/export.csv"))
    assert row["Reporter"] == "Kim Kiosk" and row["Reported through"] == "the reporting link “Gate tablet”"


def test_a_link_report_without_a_name_is_anonymous_through_the_link(admin, client):
    number = filed(admin, client)
    page = admin.get(f"/incidents/{number}").text
    facts = page.split('id="facts-title"', 1)[1].split("</dl>", 1)[0]
    assert "Anonymous" in facts and "through the reporting link “Gate tablet”" in facts
    assert "Anonymous, through the reporting link “Gate tablet”" in page.split('id="timeline"', 1)[1]
    [row] = rows(admin.get("/api/incidents/export"))
    assert row["reporter"] == "" and row["reportedThrough"] == "the reporting link “Gate tablet”"
