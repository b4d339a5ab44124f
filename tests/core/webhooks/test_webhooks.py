"""Signed webhooks, received by a real HTTP server on loopback and checked
with the Standard Webhooks reference library: every kind of event arrives
once, signed; a receiver that was down gets everything once it is back; an
endpoint that keeps failing is switched off and the admins told; private
addresses are refused unless the operator allows them; an anonymous
report's payload names nobody; only admins manage endpoints."""

from __future__ import annotations

import datetime as dt
import json
import threading
import time

import pytest
from standardwebhooks.webhooks import Webhook, WebhookVerificationError

from ehs_core.testing import mail_text, new_site, report_body
from ehs_core.webhooks import delivery

ALL = ["incident.created", "incident.updated", "incident.transitioned", "action.created", "action.updated",
       "comment.created"]


def register(admin, receiver, events=ALL, status=201):
    return admin.post_json("/api/webhooks", {"url": receiver.url, "events": events,
                                             "description": "Ticketing"}, status=status).json


def wait_until_due(admin, endpoint: dict) -> None:
    """Until every waiting delivery's next attempt is due (the periodic
    retry then takes them all)."""
    waiting = [d["nextAttemptAt"] for d in admin.get(f"/api/webhooks/{endpoint['id']}/deliveries").json
               if d["nextAttemptAt"]]
    if waiting:
        due = dt.datetime.fromisoformat(max(waiting))
        time.sleep(max(0.0, (due - dt.datetime.now(dt.UTC)).total_seconds()) + 0.1)


def verified(secret: str, received: dict) -> dict:
    """The payload, once the reference library accepted its signature."""
    return Webhook(secret).verify(received["body"], received["headers"])


def test_every_kind_of_event_arrives_once_signed(hooks_app, receiver):
    admin = hooks_app.admin()
    endpoint = register(admin, receiver)
    assert endpoint["secret"].startswith("whsec_") and endpoint["events"] == ALL
    site = new_site(admin)["id"]
    supervisor = hooks_app.user(admin, "supervisor")

    number = admin.post_json("/api/incidents", report_body(site, title="Oil on the floor")).json["number"]
    supervisor.patch_json(f"/api/incidents/{number}", {"severity": "high"})
    supervisor.post_json(f"/api/incidents/{number}/transitions", {"to": "triage"})
    me = supervisor.get("/api/auth/me").json["user"]["id"]
    action = supervisor.post_json(f"/api/incidents/{number}/actions",
                                  {"title": "Fix the leak", "assigneeId": me}).json
    supervisor.patch_json(f"/api/actions/{action['id']}", {"status": "done"})
    supervisor.post_json(f"/api/incidents/{number}/comments", {"body": "Mopped up at 8."})

    received = receiver.wait(6)
    hooks_app.settle()
    time.sleep(0.3)
    assert len(receiver.received) == 6  # once each
    payloads = [verified(endpoint["secret"], r) for r in received]
    assert sorted(p["type"] for p in payloads) == sorted(ALL)
    assert all(r["path"] == "/hooks/ehs?src=tests" for r in received)
    assert len({r["headers"]["webhook-id"] for r in received}) == 6
    by_type = {p["type"]: p["data"] for p in payloads}
    created = by_type["incident.created"]["incident"]
    # The number is given at COMMIT; the payload still carries it.
    assert (created["number"], created["reference"], created["title"]) == (number, f"INC-{number:04d}",
                                                                          "Oil on the floor")
    assert by_type["incident.updated"]["changes"] == {"severity": {"old": "low", "new": "high"}}
    assert (by_type["incident.transitioned"]["from"], by_type["incident.transitioned"]["to"]) == (
        "reported", "triage")
    assert by_type["action.created"]["action"]["title"] == "Fix the leak"
    assert by_type["action.updated"]["changes"]["status"]["new"] == "done"
    assert by_type["comment.created"]["comment"]["body"] == "Mopped up at 8."
    assert by_type["comment.created"]["actorId"] == me

    # A body changed on the way, or another secret, fails the reference check.
    tampered = dict(received[0], body=received[0]["body"].replace("Oil", "Ink"))
    with pytest.raises(WebhookVerificationError):
        verified(endpoint["secret"], tampered)
    with pytest.raises(WebhookVerificationError):
        verified("whsec_" + "A" * 43 + "=", received[0])

    deliveries = admin.get(f"/api/webhooks/{endpoint['id']}/deliveries").json
    assert [(d["status"], d["attempts"], d["lastError"]) for d in deliveries] == [("delivered", 1, None)] * 6
    # The secret is shown once.
    listed = admin.get("/api/webhooks").json
    assert [e["id"] for e in listed] == [endpoint["id"]] and "secret" not in listed[0]


def test_only_the_chosen_events_of_active_endpoints_are_sent(hooks_app, receiver):
    admin = hooks_app.admin()
    site = new_site(admin)["id"]
    endpoint = register(admin, receiver, events=["incident.transitioned"])
    admin.post_json("/api/incidents", report_body(site))  # not chosen
    hooks_app.settle()
    admin.patch_json(f"/api/webhooks/{endpoint['id']}", {"active": False})
    number = admin.post_json("/api/incidents", report_body(site)).json["number"]
    admin.post_json(f"/api/incidents/{number}/transitions", {"to": "triage"})  # switched off
    admin.patch_json(f"/api/webhooks/{endpoint['id']}", {"active": True})
    admin.post_json(f"/api/incidents/{number}/transitions", {"to": "investigation"})
    received = receiver.wait(1)
    hooks_app.settle()
    assert [p["data"]["to"] for p in receiver.payloads()] == ["investigation"]
    assert verified(endpoint["secret"], received[0])["type"] == "incident.transitioned"


def test_a_receiver_down_for_a_while_gets_everything_when_it_is_back(hooks_app, receiver, monkeypatch):
    # Enough tries that none fails for good while it is down (each change's
    # own sending also retries what is due).
    monkeypatch.setitem(hooks_app.registry.settings, "webhooks.max_attempts", 10)
    admin = hooks_app.admin()
    site = new_site(admin)["id"]
    endpoint = register(admin, receiver, events=["incident.created", "comment.created"])
    receiver.stop()
    number = admin.post_json("/api/incidents", report_body(site, title="First")).json["number"]
    admin.post_json("/api/incidents", report_body(site, title="Second"))
    admin.post_json(f"/api/incidents/{number}/comments", {"body": "While it was down"})
    hooks_app.settle()
    deliveries = admin.get(f"/api/webhooks/{endpoint['id']}/deliveries").json
    assert [d["status"] for d in deliveries] == ["pending"] * 3
    assert all(d["attempts"] >= 1 and "Connection refused" in d["lastError"] for d in deliveries)

    receiver.start()  # back, on the same address
    wait_until_due(admin, endpoint)
    assert delivery.send_due(hooks_app.registry) == 3  # what the periodic retry runs
    received = receiver.wait(3)
    payloads = [verified(endpoint["secret"], r) for r in received]
    assert sorted(p["type"] for p in payloads) == ["comment.created", "incident.created", "incident.created"]
    deliveries = admin.get(f"/api/webhooks/{endpoint['id']}/deliveries").json
    assert [d["status"] for d in deliveries] == ["delivered"] * 3
    assert all(d["attempts"] >= 2 for d in deliveries)
    assert delivery.send_due(hooks_app.registry) == 0  # nothing twice


def test_senders_running_at_once_send_each_delivery_once(hooks_app, receiver, monkeypatch):
    """Several workers retry at the same minute: each claims its own rows
    (FOR UPDATE SKIP LOCKED on PostgreSQL, one writer at a time on SQLite)."""
    monkeypatch.setitem(hooks_app.registry.settings, "webhooks.max_attempts", 10)
    admin = hooks_app.admin()
    site = new_site(admin)["id"]
    endpoint = register(admin, receiver, events=["incident.created"])
    receiver.stop()
    for n in range(12):
        admin.post_json("/api/incidents", report_body(site, title=f"Report {n}"))
    hooks_app.settle()
    receiver.start()
    wait_until_due(admin, endpoint)
    monkeypatch.setattr(delivery, "BATCH", 2)
    start = threading.Barrier(4)
    counts: list[int] = []

    def sender() -> None:
        start.wait()
        counts.append(delivery.send_due(hooks_app.registry))

    threads = [threading.Thread(target=sender) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    received = receiver.wait(12)
    time.sleep(0.3)
    assert sum(counts) == 12 and len(receiver.received) == 12
    assert len({r["headers"]["webhook-id"] for r in received}) == 12
    titles = sorted(verified(endpoint["secret"], r)["data"]["incident"]["title"] for r in received)
    assert titles == sorted(f"Report {n}" for n in range(12))


def test_an_endpoint_that_keeps_failing_is_switched_off_and_admins_told(hooks_app, receiver, smtp_server):
    admin = hooks_app.admin()
    site = new_site(admin)["id"]
    endpoint = register(admin, receiver, events=["incident.created"])
    smtp_server.inbox.clear()
    receiver.status = 500
    for title in ("One", "Two"):
        admin.post_json("/api/incidents", report_body(site, title=title))
    hooks_app.settle()
    time.sleep(1.1)
    delivery.send_due(hooks_app.registry)  # the second and last try of each
    deliveries = admin.get(f"/api/webhooks/{endpoint['id']}/deliveries").json
    assert [(d["status"], d["attempts"], d["lastError"], d["lastStatusCode"]) for d in deliveries] == [
        ("failed", 2, "HTTP 500", 500)] * 2
    shown = admin.get("/api/webhooks").json[0]
    assert shown["active"] is False and "2 deliveries failed in a row" in shown["disabledReason"]
    [mail] = smtp_server.inbox.wait(1)
    assert (mail["To"], mail["Subject"]) == ("admin@acme.test", "A webhook was switched off: it kept failing")
    assert receiver.url in mail_text(mail)
    # Switched off, it gets nothing more.
    receiver.status = 200
    admin.post_json("/api/incidents", report_body(site, title="Three"))
    hooks_app.settle()
    assert len(receiver.received) == 4


def test_over_https_the_name_is_checked_against_the_certificate(hooks_app, tls_receiver, monkeypatch):
    """The connection goes to the address checked, yet TLS still checks the
    certificate against the URL's name (SNI): untrusted, nothing is sent;
    trusted, it is delivered."""
    admin = hooks_app.admin()
    site = new_site(admin)["id"]
    endpoint = register(admin, tls_receiver, events=["incident.created"])
    admin.post_json("/api/incidents", report_body(site, title="Untrusted"))
    hooks_app.settle()
    [untrusted] = admin.get(f"/api/webhooks/{endpoint['id']}/deliveries").json
    assert untrusted["status"] == "pending" and "CERTIFICATE_VERIFY_FAILED" in untrusted["lastError"]
    assert tls_receiver.received == []

    monkeypatch.setenv("SSL_CERT_FILE", tls_receiver.tls[0])  # the receiver's issuer, now trusted
    time.sleep(1.1)
    delivery.send_due(hooks_app.registry)
    [received] = tls_receiver.wait(1)
    assert verified(endpoint["secret"], received)["data"]["incident"]["title"] == "Untrusted"
    assert received["headers"]["Host"] == f"localhost:{tls_receiver.port}"


def test_private_addresses_are_refused_unless_allowed(hooks_app, receiver, monkeypatch):
    admin = hooks_app.admin()
    allowed = register(admin, receiver, events=["incident.created"])
    monkeypatch.setitem(hooks_app.registry.settings, "webhooks.allow_private", False)  # the default
    for url in (receiver.url, "https://127.0.0.1/hook", "https://10.1.2.3/hook", "https://[::1]/hook",
                "https://169.254.169.254/latest/meta-data", "https://localhost/hook",
                "https://[::ffff:192.168.0.1]/hook"):
        answer = admin.post_json("/api/webhooks", {"url": url, "events": ["incident.created"]}, status=400)
        assert answer.json["issues"] == [{"path": "url", "message": "Must not be a private, loopback or "
                                                                    "link-local address"}], url
    for url, says in (("http://hooks.example.com/ehs", "Must use https"),
                      ("ftp://hooks.example.com/", "Must be a URL such as https://hooks.example.com/ehs"),
                      ("https://user:pw@hooks.example.com/", "Must not carry a user name or password")):
        answer = admin.post_json("/api/webhooks", {"url": url, "events": ["incident.created"]}, status=400)
        assert answer.json["issues"][0]["message"] == says
    # An endpoint registered while allowed is checked again at each attempt.
    admin.post_json("/api/incidents", report_body(new_site(admin)["id"]))
    hooks_app.settle()
    assert receiver.received == []
    [refused] = admin.get(f"/api/webhooks/{allowed['id']}/deliveries").json
    assert refused["lastError"] == "refused: Must not be a private, loopback or link-local address"


def test_an_anonymous_reports_payload_names_no_reporter(hooks_app, receiver):
    admin = hooks_app.admin()
    site = new_site(admin)["id"]
    endpoint = register(admin, receiver, events=["incident.created", "incident.updated"])
    reporter = hooks_app.user(admin, "reporter")
    me = reporter.get("/api/auth/me").json["user"]
    number = reporter.post_json("/api/incidents", report_body(site, anonymous=True,
                                                              title="Blocked fire exit")).json["number"]
    admin.patch_json(f"/api/incidents/{number}", {"severity": "high"})
    received = receiver.wait(2)
    for r in received:
        payload = verified(endpoint["secret"], r)
        incident = payload["data"]["incident"]
        assert incident["anonymous"] is True and incident["reporterId"] is None
        assert payload["type"] == "incident.updated" or payload["data"]["actorId"] is None
        for trace in (me["email"], me["name"], "Reporter Person"):
            assert trace not in r["body"]
    named = reporter.post_json("/api/incidents", report_body(site, title="Named")).json
    payload = json.loads(receiver.wait(3)[2]["body"])
    assert payload["data"]["incident"]["reporterId"] == me["id"] == named["reporter"]["id"]


def test_only_admins_manage_webhooks(hooks_app, receiver):
    admin = hooks_app.admin()
    manager = hooks_app.user(admin, "safety_manager")
    endpoint = register(admin, receiver)
    manager.get("/api/webhooks", status=403)
    manager.post_json("/api/webhooks", {"url": receiver.url, "events": ALL}, status=403)
    manager.delete(f"/api/webhooks/{endpoint['id']}", status=403)
    manager.get(f"/api/webhooks/{endpoint['id']}/deliveries", status=403)
    answer = admin.post_json("/api/webhooks", {"url": receiver.url, "events": ["incident.deleted"]},
                             status=400)
    assert answer.json["issues"][0]["path"] == "events"
    admin.delete(f"/api/webhooks/{endpoint['id']}", status=204)
    admin.get(f"/api/webhooks/{endpoint['id']}/deliveries", status=404)
    assert admin.get("/api/webhooks").json == []


def test_the_openapi_document_describes_the_routes_and_each_events_payload(hooks_app):
    document = hooks_app.client().get("/api/openapi.json").json
    assert {"get", "post"} <= set(document["paths"]["/api/webhooks"])
    assert {"patch", "delete"} <= set(document["paths"]["/api/webhooks/{id}"])
    assert "get" in document["paths"]["/api/webhooks/{id}/deliveries"]
    assert sorted(document["webhooks"]) == sorted(ALL)
    created = document["webhooks"]["incident.created"]["post"]
    body = created["requestBody"]["content"]["application/json"]["schema"]
    assert body["properties"]["type"] == {"const": "incident.created"}
    assert "reporterId" in body["properties"]["data"]["properties"]["incident"]["properties"]
    assert {p["name"] for p in created["parameters"]} == {"webhook-id", "webhook-timestamp",
                                                          "webhook-signature"}
