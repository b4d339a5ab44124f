"""The link page's form sent without JavaScript (project rule: pages work
without it): a plain multipart post to /k/<token>/report files the report
through the same operation as the API, with its photos; the server-given
clientId makes a double submit file once; a named report is thanked on the
page a 303 leads to, an anonymous one in the answer itself with its
follow-up code (never in an address); errors come back as a 400 beside
their fields, naming the photos to choose again; a revoked link is a 404.

Spec: Reporting links; style "pages work without JavaScript"."""

from __future__ import annotations

import re

import pytest

from tests.core.attachments import samples
from tests.plugins.kiosk.support import LINKS, attachment_count, incident_count, new_link, new_site
from tests.plugins.kiosk.test_page_browser import Page


def attrs(html: str, element_id: str) -> dict:
    return Page(html).by_id(element_id)[1]


def text(html: str, element_id: str) -> str:
    found = re.search(rf'id="{element_id}"[^>]*>(.*?)</', html, re.S)
    assert found, element_id
    return found.group(1).strip()


@pytest.fixture
def link(admin) -> dict:
    site = new_site(admin, "Plant North")
    return new_link(admin, "Gate tablet", site_id=site)


def form_of(client, token: str):
    form = client.get(f"/k/{token}").forms["report"]
    assert (form.method.lower(), form.enctype) == ("post", "multipart/form-data")
    assert form.action == f"/k/{token}/report"
    assert len(form["clientId"].value) == 36  # a fresh UUID from the server
    return form


def send(client, form, status: int, files: tuple = ()):
    """The form as a browser posts it: its fields and the chosen photos in
    the multipart field `files`."""
    fields = [(name, value) for name, value in form.submit_fields() if name != "files"]
    return client.post(form.action, params=fields, content_type="multipart/form-data", status=status,
                       upload_files=[("files", name, data, "image/png") for name, data in files])


def test_a_named_report_with_photos_is_filed_once_and_thanked_after_a_303(link, client, admin, dbsession):
    form = form_of(client, link["token"])
    form["title"] = "Pallet blocking the exit"
    form["severity"] = "high"
    form["occurredAt"] = "2024-05-01T08:15"
    form["reporterName"] = "Pat Doe"
    answer = send(client, form, 303, [("pallet.png", samples.PNG), ("second.png", samples.PNG)])
    assert answer.location.split("?")[0].endswith(f"/k/{link['token']}/thanks")
    thanks = answer.follow(status=200)
    assert "INC-0001" in thanks.text and "follow-up code" not in thanks.text
    assert thanks.headers["Referrer-Policy"] == "same-origin"
    assert (incident_count(dbsession), attachment_count(dbsession)) == (1, 2)
    incident = admin.get("/api/incidents/1").json
    assert (incident["title"], incident["severity"], incident["channel"]) == (
        "Pallet blocking the exit", "high", "kiosk")
    assert incident["anonymous"] is False and incident["occurredAt"].startswith("2024-05-01")
    # Sent twice (a double click, a reload): the same report, filed once.
    again = send(client, form, 303, [("pallet.png", samples.PNG), ("second.png", samples.PNG)])
    assert "INC-0001" in again.follow().text
    assert (incident_count(dbsession), attachment_count(dbsession)) == (1, 2)


def test_an_anonymous_report_shows_its_follow_up_code_once_in_the_answer(link, client, dbsession):
    form = form_of(client, link["token"])
    form["title"] = "Leaking drum"
    answer = form.submit(status=200)
    assert "INC-0001" in answer.text and "Your follow-up code" in answer.text
    code = text(answer.text, "follow-up-code")
    assert len(code) > 20
    assert attrs(answer.text, "follow-up-link")["href"].endswith(f"/f/{code}")
    assert attrs(answer.text, "follow-up-qr")["src"] == f"/f/{code}/qr.svg"
    assert "Location" not in answer.headers
    client.get(f"/f/{code}/qr.svg", status=200)
    # The repeat answers with the reference, never the code again.
    again = form.submit(status=303).follow()
    assert "INC-0001" in again.text and code not in again.text
    assert incident_count(dbsession) == 1


def test_errors_come_back_beside_their_fields_with_the_values_and_the_photos_named(link, client, dbsession):
    form = form_of(client, link["token"])
    form["title"] = ""
    form["locationDetail"] = "Dock 3"
    form["occurredAt"] = "2099-01-01T10:00"
    answer = send(client, form, 400, [("dock.png", samples.PNG)])
    assert text(answer.text, "title-error") and "hidden" not in attrs(answer.text, "title-error")
    assert text(answer.text, "occurredAt-error")
    assert attrs(answer.text, "title")["aria-invalid"] == "true"
    assert attrs(answer.text, "locationDetail")["value"] == "Dock 3"
    assert "dock.png" in text(answer.text, "dropped-files")
    assert answer.forms["report"]["clientId"].value == form["clientId"].value
    assert (incident_count(dbsession), attachment_count(dbsession)) == (0, 0)
    # Corrected and sent again from the re-rendered form: filed.
    corrected = answer.forms["report"]
    corrected["title"] = "Dock door jammed"
    corrected["occurredAt"] = "2024-05-01T08:15"
    corrected["reporterName"] = "Pat Doe"
    corrected.submit(status=303)
    assert incident_count(dbsession) == 1


def test_a_revoked_link_files_nothing(link, client, admin, dbsession):
    form = form_of(client, link["token"])
    form["title"] = "Too late"
    admin.patch_json(f"{LINKS}/{link['id']}", {"revoked": True}, status=200)
    answer = form.submit(status=404)
    assert "This reporting link does not work" in answer.text
    assert incident_count(dbsession) == 0
    client.get(f"/k/{link['token']}/thanks?report={form['clientId'].value}", status=404)


def test_the_thanks_page_is_only_for_the_link_that_filed(link, client, admin):
    form = form_of(client, link["token"])
    form["title"] = "Wet floor"
    form["reporterName"] = "Pat Doe"
    thanks = form.submit(status=303).location
    other = new_link(admin, "Canteen")
    client.get(thanks.replace(link["token"], other["token"]), status=404)
    client.get(f"/k/{link['token']}/thanks?report=not-a-uuid", status=404)
