"""Outgoing mail: sent only after the request commits, delivered over SMTP,
retried when the SMTP server is down."""

from __future__ import annotations

import dataclasses
import logging
import time

from ehs_core.events import UserCreated
from ehs_core.testing import PUBLIC_URL, mail_html
from tests.core.auth.support import body_of, create_user, link_in
from tests.core.workflow.support import report


def test_mail_has_sender_recipient_subject_and_a_greeting(admin, client, inbox):
    create_user(admin, "bob@acme.test", name="Bob Builder")
    client.post_json("/api/auth/magic-link", {"email": "bob@acme.test"}, status=204)
    [message] = inbox.wait(1)
    assert message["From"] == "ehs@ehs.test"
    assert message["To"] == "bob@acme.test"
    assert message["Subject"] == "Your sign-in link"
    assert message["Date"]
    assert message["Message-ID"]
    # plain text and HTML, the same words and link in each
    assert message.get_content_type() == "multipart/alternative"
    assert "Hello Bob Builder," in body_of(message)
    assert "15 minutes" in body_of(message)
    html = mail_html(message)
    url, token = link_in(message)
    assert "Hello Bob Builder," in html and "15 minutes" in html
    assert f'href="{url}?token={token}"' in html


def test_the_html_part_keeps_what_people_typed_as_text(admin, client, inbox):
    create_user(admin, "bob@acme.test", name="<b>Bob</b> & {{ name }}")
    client.post_json("/api/auth/magic-link", {"email": "bob@acme.test"}, status=204)
    html = mail_html(inbox.wait(1)[0])
    assert "Hello &lt;b&gt;Bob&lt;/b&gt; &amp; {{ name }}," in html
    assert "<b>Bob</b>" not in html


def test_the_invitation_names_the_role_in_both_parts(admin, inbox):
    admin.post_json("/api/users", {"name": "Sam", "email": "sam@acme.test", "role": "supervisor"}, status=201)
    [message] = inbox.wait(1)
    for text in (body_of(message), mail_html(message)):
        assert "You are invited as a" in text and "supervisor (you triage and investigate" in text
    assert "/auth/reset?token=" in mail_html(message)


def test_a_serious_report_shows_when_it_happened_in_the_sites_zone(admin, inbox):
    site = admin.post_json("/api/sites", {"name": "Plant West", "timezone": "America/Los_Angeles"},
                           status=201).json["id"]
    inbox.settle()
    inbox.clear()
    # 15:30 UTC on 2 March 2026 is 07:30 PST at the site; the reporter's offset (+01:00) says nothing
    incident = admin.post_json("/api/incidents", {
        "title": "Fall from ladder", "type": "injury", "severity": "high", "siteId": site,
        "occurredAt": "2026-03-02T16:30:00+01:00"}, status=201).json
    [message] = inbox.wait(1)
    text, html = body_of(message), mail_html(message)
    for part in (text, html):
        assert "Occurred: 2 Mar 2026, 07:30 PST" in part
        assert "2026-03-02T" not in part
        assert f"{PUBLIC_URL}/incidents/{incident['number']}" in part


def test_the_assignment_mail_says_the_due_date_in_words_and_links_the_action(admin, inbox):
    site = admin.post_json("/api/sites", {"name": "Plant North"}, status=201).json["id"]
    incident = report(admin, site, title="Oil on the floor")
    me = admin.get("/api/auth/me").json["user"]
    action = admin.post_json(f"/api/incidents/{incident['number']}/actions", {
        "title": "Fix the leak", "assigneeId": me["id"], "dueDate": "2026-04-09"}, status=201).json
    [message] = [m for m in inbox.wait(1) if m["Subject"].startswith("Action assigned")]
    text, html = body_of(message), mail_html(message)
    for part in (text, html):
        assert "9 Apr 2026" in part and "2026-04-09" not in part
    assert f'href="{PUBLIC_URL}/actions/{action["id"]}"' in html
    assert f'href="{PUBLIC_URL}/incidents/{incident["number"]}"' in html


def test_names_with_template_syntax_are_sent_literally(admin, client, inbox):
    create_user(admin, "bob@acme.test", name="Bob $link ${name}")
    client.post_json("/api/auth/magic-link", {"email": "bob@acme.test"}, status=204)
    [message] = inbox.wait(1)
    assert "Hello Bob $link ${name}," in body_of(message)
    link_in(message)


def test_request_that_fails_validation_sends_nothing(admin, inbox):
    response = admin.post_json("/api/users", {"name": "Nina", "email": "nina@acme.test",
                                              "role": "emperor"}, status=400)
    assert response.json["issues"][0]["path"] == "role"
    assert inbox.settle() == []


def test_mail_queued_by_a_request_that_then_fails_is_not_sent(admin, inbox, registry):
    """The invitation is rendered and queued (by auth's listener) before a
    later listener fails; the rollback must drop it together with the user."""
    seen = []

    def broken(event: UserCreated) -> None:
        seen.append(event.user.email)
        raise RuntimeError("listener failed")

    registry.registerHandler(broken, (UserCreated,))
    try:
        admin.post_json("/api/users", {"name": "Nina", "email": "nina@acme.test", "role": "reporter"},
                        status=500)
    finally:
        registry.unregisterHandler(broken, (UserCreated,))
    assert seen == ["nina@acme.test"]
    assert inbox.settle(0.5) == []
    emails = [user["email"] for user in admin.get("/api/users").json]
    assert "nina@acme.test" not in emails


def wait_for_log(caplog, text: str, timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if any(text in record.getMessage() for record in list(caplog.records)):
            return
        time.sleep(0.02)
    raise AssertionError(f"no log line containing {text!r}")


def test_mail_is_delivered_once_the_smtp_server_is_back(admin, client, inbox, smtp_server, caplog):
    create_user(admin, "bob@acme.test")
    caplog.set_level(logging.WARNING, logger="ehs_core.mail")
    smtp_server.stop()
    started = time.monotonic()
    client.post_json("/api/auth/magic-link", {"email": "bob@acme.test"}, status=204)
    assert time.monotonic() - started < 5  # the request does not wait for SMTP
    # the first delivery attempt failed and was logged with the recipient
    wait_for_log(caplog, "mail to bob@acme.test not delivered")
    assert inbox.messages == []
    smtp_server.start()
    [message] = inbox.wait(1, timeout=15)
    assert message["To"] == "bob@acme.test"
    link_in(message)
    # delivered once, not once per attempt
    assert len(inbox.settle(0.5)) == 1


# --- header values from people, mail that can never be delivered -----------------------------


def failed_mail(admin):
    return admin.get("/api/health").json["detail"]["mail"]


def unfolded(value):
    """A header as one line (RFC 5322 2.2.3: unfolding removes the CRLFs)."""
    return value.replace("\r\n", "").replace("\n", "").strip()


def job_runner_idle(registry):
    registry["job_runner"].wait_idle()


def test_a_title_with_line_breaks_still_reaches_the_safety_managers_and_injects_nothing(admin, inbox):
    """A kiosk link is enough to type this title; the notice of a serious
    incident must still arrive, with the whole title on one line."""
    site = admin.post_json("/api/sites", {"name": "Plant North"}).json["id"]
    title = "Gas leak\r\nBcc: intruder@evil.test\r\n\r\nat the boiler"
    admin.post_json("/api/incidents", {"title": title, "type": "hazard", "severity": "critical",
                                       "occurredAt": "2025-01-01T08:00:00+00:00", "siteId": site})
    [message] = inbox.wait(1)
    assert message["To"] == "admin@acme.test"
    assert unfolded(message["Subject"]) == (
        "[critical] INC-0001 reported: Gas leak Bcc: intruder@evil.test at the boiler")
    assert message["Bcc"] is None
    assert inbox.recipients == ["admin@acme.test"]
    assert "Gas leak" in body_of(message)


def test_an_action_title_with_line_breaks_reaches_the_assignee(admin, inbox):
    site = admin.post_json("/api/sites", {"name": "Plant North"}).json["id"]
    number = admin.post_json("/api/incidents", {
        "title": "Spill", "type": "hazard", "severity": "low",
        "occurredAt": "2025-01-01T08:00:00+00:00", "siteId": site}).json["number"]
    me = admin.get("/api/auth/me").json["user"]["id"]
    admin.post_json(f"/api/incidents/{number}/actions",
                    {"title": "Fix the valve\nX-Priority: 1", "assigneeId": me}, status=201)
    [message] = inbox.wait(1)
    assert unfolded(message["Subject"]) == "Action assigned: Fix the valve X-Priority: 1 (INC-0001)"
    assert message["X-Priority"] is None


def pending_jobs(dbsession):
    from ehs_core.jobs.models import PENDING, OutboxJob

    return dbsession.query(OutboxJob).filter(OutboxJob.status == PENDING).count()


def test_a_mail_refused_for_good_is_recorded_for_admins_and_not_retried(admin, client, inbox, registry,
                                                                        caplog, dbsession):
    create_user(admin, "gone@acme.test")
    inbox.refused.add("gone@acme.test")
    caplog.set_level(logging.ERROR, logger="ehs_core.mail")
    assert failed_mail(admin)["failed"] == 0
    client.post_json("/api/auth/magic-link", {"email": "gone@acme.test"}, status=204)
    wait_for_log(caplog, "mail to gone@acme.test failed for good")
    job_runner_idle(registry)
    assert pending_jobs(dbsession) == 0  # no retry is waiting
    lost = failed_mail(admin)
    assert lost["failed"] == 1
    [entry] = lost["latest"]
    assert (entry["recipient"], entry["subject"], entry["attempts"]) == (
        "gone@acme.test", "Your sign-in link", 1)
    assert "550" in entry["error"]
    assert "token" not in str(lost)  # the link itself is not kept
    # only admins see it
    assert "detail" not in client.get("/api/health").json


def test_a_mail_whose_retries_run_out_is_recorded(admin, client, inbox, registry, smtp_server, caplog,
                                                  monkeypatch):
    from ehs_core.mail import DELIVER_JOB

    monkeypatch.setitem(registry["jobs"], DELIVER_JOB, dataclasses.replace(registry["jobs"][DELIVER_JOB],
                                                                         retries=1, retry_delay=0))
    create_user(admin, "bob@acme.test")
    caplog.set_level(logging.ERROR, logger="ehs_core.mail")
    smtp_server.stop()
    client.post_json("/api/auth/magic-link", {"email": "bob@acme.test"}, status=204)
    job_runner_idle(registry)  # the retry, due at once
    wait_for_log(caplog, "mail to bob@acme.test failed for good")
    smtp_server.start()
    [entry] = failed_mail(admin)["latest"]
    assert entry["recipient"] == "bob@acme.test"
    assert entry["attempts"] == 2
