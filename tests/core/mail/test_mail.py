"""Outgoing mail: sent only after the request commits, delivered over SMTP,
retried when the SMTP server is down."""

from __future__ import annotations

import logging
import time

from ehs_core.events import UserCreated
from tests.core.auth.support import body_of, create_user, link_in


def test_mail_has_sender_recipient_subject_and_a_greeting(admin, client, inbox):
    create_user(admin, "bob@acme.test", name="Bob Builder")
    client.post_json("/api/auth/magic-link", {"email": "bob@acme.test"}, status=204)
    [message] = inbox.wait(1)
    assert message["From"] == "ehs@ehs.test"
    assert message["To"] == "bob@acme.test"
    assert message["Subject"] == "Your sign-in link"
    assert message["Date"]
    assert message["Message-ID"]
    assert message.get_content_type() == "text/plain"
    assert "Hello Bob Builder," in body_of(message)
    assert "15 minutes" in body_of(message)


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
