"""The follow-up as pages (issue #39 item 3): the reporter's page at
/f/<code> (no sign-in, works without JavaScript, not indexed, refusals in
plain words with their status) and the team's panel on the incident page
(supervisor and above, only on a report filed without a name), whose form
works without JavaScript and answers htmx with the panel alone."""

from __future__ import annotations

import datetime as dt

import pytest
from sqlalchemy import update

from ehs_core.followup.services import WRONG_CODES
from ehs_core.incidents.models import Incident
from ehs_core.testing import file_report, form_with


@pytest.fixture
def code(admin, site) -> str:
    return file_report(admin, site, anonymous=True).json["followUpCode"]


def test_the_reporter_reads_and_answers_on_the_page_without_javascript(code, client, supervisor):
    supervisor.post_json("/api/incidents/1/follow-up-messages", {"body": "Which door was it?"}, status=201)
    page = client.get(f"/f/{code}", status=200)
    assert page.headers["X-Robots-Tag"] == "noindex, nofollow"
    assert page.headers["Referrer-Policy"] == "same-origin"  # no other site gets the address
    assert page.headers["Cache-Control"] == "no-store"
    assert '<meta name="robots" content="noindex, nofollow">' in page.text
    assert "INC-0001" in page.text and "Which door was it?" in page.text
    assert "Received: the safety team has not looked at it yet." in page.text
    assert "The safety team" in page.text and supervisor.user["name"] not in page.text
    form = form_with(page, f"/f/{code}")
    form["body"] = "Door 3"
    sent = form.submit(status=303).follow(status=200)
    assert "Your message was sent to the safety team." in sent.text and "Door 3" in sent.text
    thread = supervisor.get("/api/incidents/1/follow-up-messages").json["messages"]
    assert [m["body"] for m in thread] == ["Which door was it?", "Door 3"]


def test_an_empty_answer_is_shown_again_with_its_error(code, client, supervisor):
    form = form_with(client.get(f"/f/{code}"), f"/f/{code}")
    form["body"] = "  "
    refused = form.submit(status=400)
    assert 'id="answer-error"' in refused.text and 'aria-invalid="true"' in refused.text
    assert supervisor.get("/api/incidents/1/follow-up-messages").json["messages"] == []


def test_refusals_are_pages_in_plain_words(code, new_client, dbsession):
    browser = new_client()
    browser.extra_environ["REMOTE_ADDR"] = "203.0.113.9"
    wrong = browser.get("/f/" + "A" * 32, status=404)
    assert "No report has this code" in wrong.text and wrong.headers["X-Robots-Tag"].startswith("noindex")
    for _ in range(WRONG_CODES.count - 1):
        browser.get("/f/" + "B" * 32, status=404)
    throttled = browser.get(f"/f/{code}", status=429)
    assert "Too many wrong codes" in throttled.text and throttled.headers["Retry-After"]
    dbsession.execute(update(Incident).where(Incident.number == 1).values(
        status="closed", closed_at=dt.datetime.now(dt.UTC) - dt.timedelta(days=91)))
    ended = new_client().get(f"/f/{code}", status=404)
    assert "This follow-up has ended" in ended.text


def test_the_panel_shows_the_thread_to_the_team_only_and_its_form_works_without_javascript(
        code, admin, client, supervisor, reporter):
    client.post_json(f"/api/follow-up/{code}/messages", {"body": "One more thing: the light is out"})
    page = supervisor.get("/incidents/1", status=200)
    assert 'id="panel-follow_up"' in page.text and "the light is out" in page.text
    form = form_with(page, "/incidents/1/follow-up")
    form["body"] = "Thanks, which light?"
    done = form.submit(status=303)
    assert done.location.endswith("/incidents/1?notice=saved#panel-follow_up")
    assert "Thanks, which light?" in supervisor.get("/incidents/1").text
    assert [m["from"] for m in client.get(f"/api/follow-up/{code}").json["messages"]] == ["you", "team"]
    # Refused: the page again, the error by the field.
    form = form_with(supervisor.get("/incidents/1"), "/incidents/1/follow-up")
    form["body"] = ""
    refused = form.submit(status=400)
    assert 'id="follow-up-error"' in refused.text
    # A reporter who sees the incident (an assigned action) does not see the panel, nor may post to it.
    admin.post_json("/api/incidents/1/actions", {"title": "Fix the light", "assigneeId": reporter.user["id"]})
    seen = reporter.get("/incidents/1", status=200).text
    assert 'id="panel-follow_up"' not in seen and "the light is out" not in seen
    reporter.post("/incidents/1/follow-up", {"body": "hi"}, status=403)


def test_htmx_gets_the_panel_alone(code, supervisor):
    answer = supervisor.post("/incidents/1/follow-up", {"body": "Is the spill cleaned up?"},
                             headers={"HX-Request": "true"}, status=200)
    assert "<html" not in answer.text and "Is the spill cleaned up?" in answer.text
    assert 'data-announce="Your message to the reporter was sent."' in answer.text
    empty = supervisor.post("/incidents/1/follow-up", {"body": ""}, headers={"HX-Request": "true"},
                            status=200)
    assert 'id="follow-up-error"' in empty.text


def test_no_panel_on_a_report_with_a_name(admin, site, supervisor):
    file_report(admin, site)
    assert 'id="panel-follow_up"' not in supervisor.get("/incidents/1").text


def test_the_qr_code_holds_the_reporters_page_on_the_public_address(code, new_client, app_settings):
    browser = new_client()
    qr = browser.get(f"/f/{code}/qr.svg", status=200)
    assert qr.content_type == "image/svg+xml" and qr.headers["Cache-Control"] == "no-store"
    assert qr.body.lstrip().startswith(b"<?xml") or b"<svg" in qr.body[:200]
    assert segno_text(f"{app_settings['ehs.public_url']}/f/{code}") == qr.body
    browser.extra_environ["REMOTE_ADDR"] = "203.0.113.77"
    assert browser.get("/f/" + "Q" * 32 + "/qr.svg", status=404).body == b""


def segno_text(url: str) -> bytes:
    import io

    import segno

    out = io.BytesIO()
    segno.make(url, error="m", micro=False).save(out, kind="svg", scale=6, border=4)
    return out.getvalue()


def test_the_report_forms_answer_shows_the_code_with_its_address_and_qr_once(admin, site, app_settings):
    form = form_with(admin.get("/incidents/new"), "/incidents/new")
    form["type"], form["severity"], form["title"] = "hazard", "medium", "Blocked fire exit"
    form["siteId"] = str(site)
    form["anonymous"] = True
    answer = form.submit(status=200)
    code = answer.html.select_one("#follow-up-code").get_text()
    address = f"{app_settings['ehs.public_url']}/f/{code}"
    assert answer.html.select_one("#follow-up-link").get_text() == address
    assert answer.html.select_one("img.follow-up-qr")["src"] == f"/f/{code}/qr.svg"
    admin.get(f"/api/follow-up/{code}", status=200)
    # The same form sent again (a reload): the report, without the code.
    again = form.submit(status=302).follow()
    assert "INC-0001" in again.text and code not in again.text and 'id="follow-up-code"' not in again.text
