"""The California panel on the incident page: supervisors enter the
serious-injury facts and the log entry there, without JavaScript; a
refused form says what is wrong next to each field."""

from __future__ import annotations

import re

from ehs_core.testing import form_with


def new_incident(browser, site):
    return browser.post_json("/api/incidents", {
        "title": "Cashier threatened", "type": "near_miss", "severity": "medium", "siteId": site,
        "occurredAt": "2025-05-02T20:00:00-07:00"}, status=201).json["number"]


def test_a_supervisor_fills_in_the_log_entry_and_the_facts_on_the_incident_page(as_user, ca_site):
    supervisor = as_user("supervisor", name="Sam Supervisor")
    number = new_incident(supervisor, ca_site)
    page = supervisor.get(f"/incidents/{number}")
    panel = page.html.find(id="panel-calosha")
    assert panel.h2.get_text(strip=True) == "California (Cal/OSHA)"
    form = form_with(page, f"/incidents/{number}/calosha/violence")
    form["violenceType"] = "2"
    form.set("incidentKinds", True, index=2)  # threat
    form["perpetratorRelation"] = "A customer"
    form["description"] = "Threatened the cashier over a refund"
    form["circumstances"] = "Evening, one cashier on duty"
    form["where"] = "Front counter"
    form["consequences"] = "No injury; the store closed early"
    form["policeCalled"] = True
    form["peopleInvolved"] = "Dana Cashier\nRex Customer"
    form["completedByTitle"] = "Shift supervisor"
    after = form.submit(status=302).follow()
    entry = supervisor.get(f"/api/incidents/{number}").json["workplaceViolence"]
    assert entry["violenceType"] == 2 and entry["incidentKinds"] == ["threat"]
    assert entry["policeCalled"] is True and entry["securityCalled"] is False
    assert entry["peopleInvolved"] == ["Dana Cashier", "Rex Customer"]
    assert after.html.find(id="perpetratorRelation")["value"] == "A customer"
    form = form_with(after, f"/incidents/{number}/calosha/serious")
    form["inpatientHours"] = "30"
    shown = form.submit(status=302).follow()
    text = shown.html.find(id="panel-calosha").get_text(" ", strip=True)
    assert "Report to Cal/OSHA within 8 hours (in-patient hospitalization over 24 hours):" in text
    assert re.search(r"due by \d+ \w+ \d{4}, \d\d:\d\d P[SD]T", text)  # the site's clock


def test_a_refused_entry_is_shown_again_with_its_errors(as_user, ca_site):
    supervisor = as_user("supervisor")
    number = new_incident(supervisor, ca_site)
    form = form_with(supervisor.get(f"/incidents/{number}"), f"/incidents/{number}/calosha/violence")
    form["perpetratorRelation"] = "A customer"
    refused = form.submit(status=400)
    assert "Choose at least one kind of incident" in refused.html.find(id="error-summary").get_text()
    assert refused.html.find(id="violenceType-error").get_text(strip=True).endswith("Required")
    assert refused.html.find(id="perpetratorRelation")["value"] == "A customer"


def test_no_panel_for_a_reporter_or_outside_california(as_user, ca_site, tx_site):
    reporter = as_user("reporter")
    supervisor = as_user("supervisor")
    mine = new_incident(reporter, ca_site)
    assert reporter.get(f"/incidents/{mine}").html.find(id="panel-calosha") is None
    texas = supervisor.post_json("/api/incidents", {
        "title": "Threat", "type": "near_miss", "severity": "low", "siteId": tx_site,
        "occurredAt": "2025-05-02T20:00:00-05:00"}, status=201).json["number"]
    assert supervisor.get(f"/incidents/{texas}").html.find(id="panel-calosha") is None
    reporter.post(f"/incidents/{mine}/calosha/violence", {"violenceType": "1"}, status=403)


def test_the_log_page_is_in_the_menu_of_supervisors(as_user, ca_site):
    supervisor = as_user("supervisor")
    page = supervisor.get("/")
    link = page.html.find("a", string="Violence log")
    assert link is not None and link["href"] == "/calosha/violent-incident-log"
    log = supervisor.get(link["href"])
    csv_link = log.html.find("a", string="Download CSV")["href"]
    assert csv_link.startswith("/api/calosha/violent-incident-log.csv")
    assert as_user("reporter").get("/").html.find("a", string="Violence log") is None
