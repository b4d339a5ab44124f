"""The violent incident log (Labor Code §6401.9(d)): a year of entries
written with the people involved named in every free-text field comes out
of the API, the printable page, the CSV and the PDF with every required field and
no name, address, phone number, e-mail address or number of any person."""

from __future__ import annotations

import csv
import datetime as dt
import io
from typing import Any

import pytest
from pypdf import PdfReader

from ehs_core.testing import Client

LOG = "/api/calosha/violent-incident-log"
# Who is named in the entries: the people the supervisor lists as involved,
# a colleague who has an account, and a stranger named only after a title.
INVOLVED = ["Dmitri Volkov", "Keisha Brown", "Zoë Quill"]
COLLEAGUE = "Priya Raman"
IDENTIFIERS = ["Volkov", "Dmitri", "Keisha", "Brown", "Zoë", "Quill", "Priya", "Raman", "Okafor",
               "dv@mail.test", "(510) 555-0142", "510-555-0199", "1200 Harbor Blvd", "4411", "123-45-6789"]
REQUIRED = {"entryId", "date", "time", "siteName", "where", "violenceType", "violenceTypeLabel",
            "incidentKinds", "perpetratorRelation", "description", "circumstances", "consequences",
            "securityCalled", "policeCalled", "actionsTaken", "completedBy", "completedOn"}


def entry(month: int) -> dict[str, Any]:
    return {
        "violenceType": 1 + month % 4,
        "incidentKinds": ["physical_attack", "threat"] if month % 2 else ["attack_with_weapon"],
        "perpetratorRelation": "Former customer Dmitri Volkov, known to Keisha Brown",
        "description": f"Dmitri Volkov pushed Keisha Brown near the till in month {month}; "
                       "Priya Raman saw it. Mr. Okafor called out.",
        "circumstances": "Keisha worked alone; Volkov had been refused service. Write to dv@mail.test.",
        "where": "Front counter, by the door to 1200 Harbor Blvd",
        "consequences": "Keisha Brown bruised; call her at (510) 555-0142 or 510-555-0199. SSN 123-45-6789.",
        "securityCalled": True, "policeCalled": month % 3 == 0,
        "actionsTaken": "Zoë Quill (employee no. 4411) reviewed the cameras with Priya Raman.",
        "peopleInvolved": INVOLVED,
        "completedByTitle": "Store supervisor",
    }


@pytest.fixture
def year(app: Any, as_user: Any, admin: Client, ca_site: int) -> dict[str, Any]:
    """Twelve entries of 2025 at the California site (each on the 15th at
    21:30 on the site's clock), one on 31 December 2024 at 22:00 there
    (already 2025 in UTC), written by a supervisor."""
    as_user("reporter", name=COLLEAGUE)
    supervisor = as_user("supervisor", name="Sam Supervisor")
    numbers = []
    moments = [dt.datetime(2024, 12, 31, 22, 0, tzinfo=dt.timezone(dt.timedelta(hours=-8)))]
    moments += [dt.datetime(2025, month, 15, 21, 30, tzinfo=dt.timezone(dt.timedelta(hours=-8 if month in (
        1, 2, 11, 12) else -7))) for month in range(1, 13)]
    for n, moment in enumerate(moments):
        number = supervisor.post_json("/api/incidents", {
            "title": "Customer assaulted a cashier", "type": "injury", "severity": "high", "siteId": ca_site,
            "occurredAt": moment.isoformat()}, status=201).json["number"]
        supervisor.put_json(f"/api/calosha/incidents/{number}/violence", entry(n))
        numbers.append(number)
    return {"supervisor": supervisor, "numbers": numbers, "site": ca_site}


def assert_no_identifier(text: str) -> None:
    for word in IDENTIFIERS:
        assert word not in text, word


def test_the_api_answers_every_required_field_and_no_identifier(year):
    items = year["supervisor"].get(LOG, {"siteId": year["site"], "from": "2025-01-01",
                                         "to": "2025-12-31"}).json["items"]
    assert len(items) == 12  # the 31 December entry is 2024's on the site's clock
    assert [item["date"] for item in items] == [f"2025-{m:02d}-15" for m in range(1, 13)]
    for n, item in enumerate(items, start=1):
        assert REQUIRED <= set(item)
        assert all(item[key] not in (None, "", []) for key in REQUIRED)
        assert item["time"] == "21:30"
        assert item["violenceType"] == 1 + n % 4
        assert item["violenceTypeLabel"].startswith(f"Type {1 + n % 4}:")
        assert item["siteName"] == "Oakland Yard"
        assert item["securityCalled"] is True and item["policeCalled"] is (n % 3 == 0)
        assert item["completedBy"] == {"name": "Sam Supervisor", "title": "Store supervisor"}
        for key in ("perpetratorRelation", "description", "circumstances", "where", "consequences",
                    "actionsTaken"):
            assert_no_identifier(item[key])
        assert "peopleInvolved" not in item
    first = items[0]
    assert first["description"] == ("A person pushed a person near the till in month 1; a person saw it. "
                                    "A person called out.")
    assert first["perpetratorRelation"] == "Former customer a person, known to a person"
    assert "[e-mail]" in first["circumstances"] and "[phone]" in first["consequences"]
    assert "[address]" in first["where"] and "[number]" in first["actionsTaken"]


def test_the_printable_page_the_csv_and_the_pdf_show_no_identifier(year, app):
    supervisor = year["supervisor"]
    page = supervisor.get("/calosha/violent-incident-log", {"from": "2025-01-01", "to": "2025-12-31"})
    text = page.html.find("main").get_text(" ", strip=True)
    assert_no_identifier(text)
    assert text.count("Store supervisor") == 12 and "Type 4: by a person with a personal relationship" in text
    assert "Law enforcement called" in text
    answer = supervisor.get(LOG + ".csv", {"from": "2025-01-01", "to": "2025-12-31"})
    assert answer.content_type == "text/csv"
    assert_no_identifier(answer.text)
    rows = list(csv.DictReader(io.StringIO(answer.text)))
    assert len(rows) == 12
    assert all(row["violence_type"] and row["where"] and row["completed_by_title"] == "Store supervisor"
               for row in rows)
    assert {row["police_called"] for row in rows} == {"yes", "no"}
    assert 'href="/calosha/violent-incident-log.pdf?from=2025-01-01&amp;to=2025-12-31"' in page.text
    printed = supervisor.get("/calosha/violent-incident-log.pdf", {"from": "2025-01-01", "to": "2025-12-31"})
    assert printed.content_type == "application/pdf"
    assert printed.headers["Cache-Control"] == "no-store"
    text = " ".join(sheet.extract_text() for sheet in PdfReader(io.BytesIO(printed.body)).pages)
    text = " ".join(text.split())
    assert_no_identifier(text)
    assert text.count("Store supervisor") == 12 and "12 entries" in text
    for label in ("Type 4: by a person with a personal relationship", "Law enforcement called",
                  "Circumstances", "Consequences", "Perpetrator's relation to the workplace",
                  "Security called"):
        assert label in text, label
    assert "A person pushed a person near the till in month 1" in text


def test_the_supervisor_keeps_the_names_in_the_incidents_own_section(year):
    detail = year["supervisor"].get(f"/api/incidents/{year['numbers'][1]}").json
    assert detail["workplaceViolence"]["peopleInvolved"] == INVOLVED
    assert "Keisha Brown" in detail["workplaceViolence"]["description"]


def test_without_dates_the_log_covers_the_five_years_it_is_kept(year):
    items = year["supervisor"].get(LOG).json["items"]
    assert len(items) == 13


def test_only_supervisors_read_the_log_and_only_at_california_sites_is_it_kept(
        app, as_user, ca_site, tx_site):
    reporter = as_user("reporter")
    supervisor = as_user("supervisor")
    reporter.get(LOG, status=403)
    reporter.get(LOG + ".csv", status=403)
    reporter.get("/calosha/violent-incident-log", status=403)
    reporter.get("/calosha/violent-incident-log.pdf", status=403)
    number = supervisor.post_json("/api/incidents", {
        "title": "Threat by phone", "type": "near_miss", "severity": "low", "siteId": tx_site,
        "occurredAt": "2025-03-01T10:00:00-06:00"}, status=201).json["number"]
    refused = supervisor.put_json(f"/api/calosha/incidents/{number}/violence", entry(1), status=409).json
    assert "California" in refused["error"]
    mine = reporter.post_json("/api/incidents", {
        "title": "Shouted at", "type": "near_miss", "severity": "low", "siteId": ca_site,
        "occurredAt": "2025-03-01T10:00:00-08:00"}, status=201).json["number"]
    reporter.put_json(f"/api/calosha/incidents/{mine}/violence", entry(1), status=403)


def test_an_entry_is_validated_in_the_users_words(app, as_user, ca_site):
    supervisor = as_user("supervisor")
    number = supervisor.post_json("/api/incidents", {
        "title": "Shouted at", "type": "near_miss", "severity": "low", "siteId": ca_site,
        "occurredAt": "2025-03-01T10:00:00-08:00"}, status=201).json["number"]
    body = dict(entry(1), violenceType=5, incidentKinds=[], where="")
    bad = supervisor.put_json(f"/api/calosha/incidents/{number}/violence", body, status=400).json
    messages = {issue["path"]: issue["message"] for issue in bad["issues"]}
    assert messages["violenceType"] == "Must be 1, 2, 3 or 4"
    assert messages["incidentKinds"] == "Choose at least one kind of incident"
    assert messages["where"] == "Must not be empty"
    assert supervisor.get(f"/api/incidents/{number}").json["workplaceViolence"] is None
    bad = supervisor.get(LOG, {"from": "2025-02-30"}, status=400).json
    assert bad["issues"][0]["path"] == "from"


def test_an_entry_is_corrected_never_deleted_and_its_changes_are_on_the_timeline(year):
    supervisor = year["supervisor"]
    number = year["numbers"][3]
    url = f"/api/calosha/incidents/{number}/violence"
    supervisor.put_json(url, dict(entry(3), consequences="No injury"))
    supervisor.delete(url, status=405)  # no route deletes an entry
    items = supervisor.get(LOG, {"from": "2025-03-01", "to": "2025-03-31"}).json["items"]
    assert [item["consequences"] for item in items] == ["No injury"]
    timeline = supervisor.get(f"/api/incidents/{number}/timeline").json
    assert [e for e in timeline if e.get("action") == "calosha.violence_entry"]
