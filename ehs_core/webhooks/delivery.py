"""Sending the deliveries: signed as the Standard Webhooks specification
says, claimed by one sender at a time, retried with backoff, failed for good
after the last try; an endpoint whose deliveries keep failing is switched
off and the admins told by mail.

Signature (standardwebhooks.com, "Signature scheme"): the headers
`webhook-id` (the delivery's message id, the same on every attempt),
`webhook-timestamp` (Unix seconds of this attempt) and `webhook-signature`
(`v1,` and the base64 of HMAC-SHA256 over "id.timestamp.body", keyed by the
secret's bytes after `whsec_`).

The loop: a sender (a job of the outbox, `ehs_core.jobs`, written in the
change's own transaction, and the periodic retry every minute) claims the
due rows in a short transaction
(`FOR UPDATE SKIP LOCKED` on PostgreSQL, so two senders never take one row;
SQLite has one writer at a time), counts the attempt and sets the next
attempt time before it calls anyone, commits, sends outside any transaction,
then records the outcome. A sender that dies mid-send leaves the row due
again at that next attempt time, so nothing is lost and nothing is sent
twice within a backoff step. The deliveries keep their own rows (status,
attempts, last error, for the admins' page) rather than one outbox job
each; an endpoint switched off tells its admins by a mail of the outbox,
written in the transaction that switches it off.
"""

from __future__ import annotations

import base64
import datetime as dt
import hashlib
import hmac
import json
import logging
import time
from dataclasses import dataclass
from typing import Any

import urllib3
from pyramid.registry import Registry
from sqlalchemy import select

from ehs_core.db import utcnow
from ehs_core.incidents.models import Incident, reference
from ehs_core.mail import queue_mail, render
from ehs_core.security import Role
from ehs_core.ui import shipped
from ehs_core.users.models import User
from ehs_core.webhooks.models import WebhookDelivery, WebhookEndpoint
from ehs_core.webhooks.targets import TargetRefused, resolve

log = logging.getLogger(__name__)

BATCH = 20
# Backoff never waits longer than this between two attempts.
MAX_DELAY = dt.timedelta(hours=6)
TIMEOUT = urllib3.Timeout(connect=5, read=10)
USER_AGENT = "ehs-service-webhooks/1"


def sign(secret: str, message_id: str, timestamp: int, body: str) -> str:
    key = base64.b64decode(secret.removeprefix("whsec_"))
    signed = f"{message_id}.{timestamp}.{body}".encode()
    return "v1," + base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest()).decode()


def backoff(registry: Registry, attempts: int) -> dt.timedelta:
    """The wait after the `attempts`-th try: the first delay, doubling."""
    delay = dt.timedelta(seconds=registry.settings["webhooks.retry_delay"] * 2 ** max(0, attempts - 1))
    return min(delay, MAX_DELAY)


def _complete(session: Any, payload: dict[str, Any]) -> str:
    """The body, with what the change's transaction could not know yet: an
    incident's number (given at COMMIT on PostgreSQL)."""
    incident = payload.get("data", {}).get("incident")
    if isinstance(incident, dict) and incident.get("number") is None and incident.get("id") is not None:
        number = session.execute(select(Incident.number).where(Incident.id == incident["id"])).scalar()
        if number is not None:
            payload = {**payload, "data": {**payload["data"], "incident": {
                **incident, "number": number, "reference": reference(number)}}}
    return json.dumps(payload, separators=(",", ":"), ensure_ascii=False)


@dataclass(frozen=True)
class Claimed:
    delivery_id: int
    endpoint_id: int
    url: str
    secret: str
    message_id: str
    body: str
    attempts: int


def claim(registry: Registry, limit: int = BATCH) -> list[Claimed]:
    now = utcnow()
    with registry["dbsession_factory"]() as session, session.begin():
        rows = session.execute(
            select(WebhookDelivery, WebhookEndpoint)
            .join(WebhookEndpoint, WebhookEndpoint.id == WebhookDelivery.endpoint_id)
            .where(WebhookDelivery.status == "pending", WebhookDelivery.next_attempt_at <= now,
                   WebhookEndpoint.active.is_(True))
            .order_by(WebhookDelivery.next_attempt_at, WebhookDelivery.id)
            .limit(limit)
            .with_for_update(skip_locked=True, of=WebhookDelivery)).all()
        claimed = []
        for delivery, endpoint in rows:
            if delivery.body is None:
                delivery.body = _complete(session, delivery.payload)
            delivery.attempts += 1
            delivery.last_attempt_at = now
            delivery.next_attempt_at = now + backoff(registry, delivery.attempts)
            claimed.append(Claimed(delivery.id, endpoint.id, endpoint.url, endpoint.secret,
                                   delivery.message_id, delivery.body, delivery.attempts))
        return claimed


def post(registry: Registry, item: Claimed) -> tuple[int | None, str | None]:
    """One attempt: (HTTP status, error or None when delivered). The
    connection goes to an address `resolve` checked, the name kept for
    the Host header and the certificate's check (SNI)."""
    settings = registry.settings
    try:
        target = resolve(item.url, settings["webhooks.http_hosts"], settings["webhooks.allow_private"])
    except TargetRefused as exc:
        return None, f"refused: {exc}"
    timestamp = int(time.time())
    headers = {"Content-Type": "application/json", "User-Agent": USER_AGENT, "Host": target.host_header,
               "webhook-id": item.message_id, "webhook-timestamp": str(timestamp),
               "webhook-signature": sign(item.secret, item.message_id, timestamp, item.body)}
    error = "no address answered"
    for address in target.addresses:
        if target.scheme == "https":
            pool: Any = urllib3.HTTPSConnectionPool(address, target.port, server_hostname=target.host,
                                                    assert_hostname=target.host, cert_reqs="CERT_REQUIRED",
                                                    timeout=TIMEOUT, retries=False, maxsize=1)
        else:
            pool = urllib3.HTTPConnectionPool(address, target.port, timeout=TIMEOUT, retries=False, maxsize=1)
        try:
            with pool:
                answer = pool.urlopen("POST", target.path, body=item.body.encode(), headers=headers,
                                      redirect=False, retries=False, assert_same_host=False,
                                      preload_content=False)
                status = answer.status
                answer.drain_conn()
                answer.release_conn()
        except (urllib3.exceptions.HTTPError, OSError) as exc:
            error = f"{exc.__class__.__name__}: {exc}"[:500]
            continue  # the next address of the name, if any
        if 200 <= status < 300:
            return status, None
        # 3xx too: redirects are not followed (they could lead anywhere).
        return status, f"HTTP {status}"
    return None, error


def record(registry: Registry, item: Claimed, status: int | None, error: str | None) -> None:
    """The attempt's outcome; switching an endpoint off and the admins' mail
    (a row of the mail outbox) are one transaction."""
    now = utcnow()
    with registry["dbsession_factory"]() as session, session.begin():
        delivery = session.get(WebhookDelivery, item.delivery_id)
        endpoint = session.get(WebhookEndpoint, item.endpoint_id)
        if delivery is None or endpoint is None:
            return  # the endpoint was deleted meanwhile
        delivery.last_status_code = status
        if error is None:
            delivery.status, delivery.delivered_at, delivery.last_error = "delivered", now, None
            endpoint.failures_in_row = 0
            log.info("webhook %s delivered to endpoint %s", delivery.message_id, endpoint.id)
            return
        delivery.last_error = error[:500]
        if delivery.attempts < registry.settings["webhooks.max_attempts"]:
            log.warning("webhook %s to endpoint %s failed (attempt %d): %s; next at %s", delivery.message_id,
                        endpoint.id, delivery.attempts, error, delivery.next_attempt_at.isoformat())
            return
        delivery.status = "failed"
        endpoint.failures_in_row += 1
        log.error("webhook %s to endpoint %s failed for good after %d attempts: %s", delivery.message_id,
                  endpoint.id, delivery.attempts, error)
        if endpoint.active and endpoint.failures_in_row >= registry.settings["webhooks.disable_after"]:
            endpoint.active = False
            endpoint.disabled_reason = (f"Switched off on {now:%Y-%m-%d %H:%M} UTC after "
                                        f"{endpoint.failures_in_row} deliveries failed in a row: "
                                        f"{error}")[:500]
            log.error("webhook endpoint %s switched off: it keeps failing", endpoint.id)
            tell_admins(session, registry, endpoint)


def tell_admins(session: Any, registry: Registry, endpoint: WebhookEndpoint) -> None:
    public_url = registry.settings["ehs.public_url"]
    admins = session.execute(select(User.email, User.locale).where(
        User.organization_id == endpoint.organization_id, User.role == Role.admin,
        User.active.is_(True))).all()
    messages: dict[str | None, dict[str, str]] = {}
    for address, locale in admins:  # each in their own language (issue #39)
        locale = shipped(locale)
        if locale not in messages:
            messages[locale] = render(registry, "webhooks.disabled", locale=locale, url=endpoint.url,
                                      reason=endpoint.disabled_reason, link=f"{public_url}/admin/webhooks",
                                      public_url=public_url)
        queue_mail(session, registry, address, messages[locale])


def send_due(registry: Registry, *_: Any) -> int:
    """Send everything due now, batch after batch; the number attempted."""
    sent = 0
    while batch := claim(registry, BATCH):
        for item in batch:
            status, error = post(registry, item)
            record(registry, item, status, error)
        sent += len(batch)
    return sent
