"""Webhook endpoints (admins register them) and the deliveries each event
makes, written in the transaction of the change."""

from __future__ import annotations

import base64
import secrets
from typing import Any

from pyramid.request import Request
from sqlalchemy import func, select

from ehs_core import refdata
from ehs_core.db import utcnow
from ehs_core.errors import Invalid, NotFound
from ehs_core.events import Event
from ehs_core.jobs import queue_job
from ehs_core.serialize import iso
from ehs_core.webhooks.kinds import kinds
from ehs_core.webhooks.models import WebhookDelivery, WebhookEndpoint
from ehs_core.webhooks.targets import TargetRefused, resolve

SEND_JOB = "webhooks.send"
ENDPOINTS_KEY = "webhooks.endpoints"


def new_secret() -> str:
    """Standard Webhooks' secret form: `whsec_` and 32 random bytes in base64."""
    return "whsec_" + base64.b64encode(secrets.token_bytes(32)).decode()


def check_url(request: Request, url: str) -> None:
    settings = request.registry.settings
    try:
        resolve(url, settings["webhooks.http_hosts"], settings["webhooks.allow_private"])
    except TargetRefused as exc:
        raise Invalid("url", str(exc)) from None


def check_events(request: Request, names: list[str]) -> list[str]:
    known = kinds(request.registry)
    unknown = [name for name in names if name not in known]
    if unknown:
        raise Invalid("events", f"Unknown event {unknown[0]!r}; known: {', '.join(sorted(known))}")
    if not names:
        raise Invalid("events", "Name at least one event")
    return list(dict.fromkeys(names))


def endpoint_json(endpoint: WebhookEndpoint) -> dict[str, Any]:
    return {"id": endpoint.id, "url": endpoint.url, "events": endpoint.events,
            "description": endpoint.description, "active": endpoint.active,
            "disabledReason": endpoint.disabled_reason, "createdAt": iso(endpoint.created_at)}


def delivery_json(delivery: WebhookDelivery) -> dict[str, Any]:
    return {"id": delivery.id, "messageId": delivery.message_id, "type": delivery.event_type,
            "status": delivery.status, "attempts": delivery.attempts, "lastError": delivery.last_error,
            "lastStatusCode": delivery.last_status_code, "createdAt": iso(delivery.created_at),
            "lastAttemptAt": iso(delivery.last_attempt_at), "deliveredAt": iso(delivery.delivered_at),
            "nextAttemptAt": iso(delivery.next_attempt_at) if delivery.status == "pending" else None}


def _organization(request: Request) -> int:
    return request.identity.account.organization_id


def list_endpoints(request: Request) -> list[WebhookEndpoint]:
    return list(request.dbsession.execute(
        select(WebhookEndpoint).where(WebhookEndpoint.organization_id == _organization(request))
        .order_by(WebhookEndpoint.id)).scalars())


def get_endpoint(request: Request, endpoint_id: int) -> WebhookEndpoint:
    endpoint = request.dbsession.get(WebhookEndpoint, endpoint_id)
    if endpoint is None or endpoint.organization_id != _organization(request):
        raise NotFound()
    return endpoint


def create_endpoint(request: Request, data: dict[str, Any]) -> WebhookEndpoint:
    """A new endpoint; its secret is in the answer this once."""
    check_url(request, data["url"])
    endpoint = WebhookEndpoint(organization_id=_organization(request), url=data["url"].strip(),
                               events=check_events(request, data["events"]),
                               description=data.get("description"), secret=new_secret(), active=True,
                               failures_in_row=0)
    request.dbsession.add(endpoint)
    request.dbsession.flush()
    return endpoint


def update_endpoint(request: Request, endpoint_id: int, data: dict[str, Any]) -> WebhookEndpoint:
    """URL, events, description, or switched on and off (switched on again,
    its count of failures starts over)."""
    endpoint = get_endpoint(request, endpoint_id)
    if "url" in data:
        check_url(request, data["url"])
        endpoint.url = data["url"].strip()
    if "events" in data:
        endpoint.events = check_events(request, data["events"])
    if "description" in data:
        endpoint.description = data["description"]
    if "active" in data:
        if data["active"] and not endpoint.active:
            endpoint.failures_in_row, endpoint.disabled_reason = 0, None
        endpoint.active = data["active"]
    request.dbsession.flush()
    return endpoint


def delete_endpoint(request: Request, endpoint_id: int) -> None:
    request.dbsession.delete(get_endpoint(request, endpoint_id))
    request.dbsession.flush()


def list_deliveries(request: Request, endpoint_id: int, limit: int = 100) -> list[WebhookDelivery]:
    """The endpoint's latest deliveries, newest first."""
    endpoint = get_endpoint(request, endpoint_id)
    return list(request.dbsession.execute(
        select(WebhookDelivery).where(WebhookDelivery.endpoint_id == endpoint.id)
        .order_by(WebhookDelivery.id.desc()).limit(limit)).scalars())


def failed_count(request: Request) -> int:
    return request.dbsession.execute(
        select(func.count()).select_from(WebhookDelivery).join(WebhookEndpoint)
        .where(WebhookEndpoint.organization_id == _organization(request),
               WebhookDelivery.status == "failed")).scalar()


def _subscribed(request: Request, organization_id: int) -> tuple[tuple[int, frozenset[str]], ...]:
    """The organization's active endpoints and their events, kept by the
    worker until an endpoint changes (`refdata`: every request that changes
    a report asks, and most organizations have none)."""

    def load(request: Request) -> tuple[tuple[int, frozenset[str]], ...]:
        return tuple((row.id, frozenset(row.events)) for row in request.dbsession.execute(
            select(WebhookEndpoint.id, WebhookEndpoint.events)
            .where(WebhookEndpoint.organization_id == organization_id, WebhookEndpoint.active.is_(True))))

    identity = request.identity
    if identity is None or not identity.is_user or identity.account.organization_id != organization_id:
        return load(request)
    return refdata.cached(request, ENDPOINTS_KEY, load)


def record_deliveries(event: Event) -> None:
    """Listener on every event a kind follows: a delivery row for each
    subscribed endpoint, in the change's own transaction (rolled back with
    it), and the sending queued for after the commit."""
    request = event.request
    for kind in kinds(request.registry).values():
        if not isinstance(event, kind.event):
            continue
        organization_id = kind.organization(event)
        endpoints = [endpoint_id for endpoint_id, names in _subscribed(request, organization_id)
                     if kind.name in names]
        if not endpoints:
            continue
        data = kind.data(event)
        if data is None:
            continue
        payload = {"type": kind.name, "timestamp": iso(utcnow()), "data": data}
        for endpoint_id in endpoints:
            request.dbsession.add(WebhookDelivery(
                endpoint_id=endpoint_id, message_id="msg_" + secrets.token_urlsafe(18),
                event_type=kind.name, payload=payload, status="pending", attempts=0))
        queue_job(request, SEND_JOB)
