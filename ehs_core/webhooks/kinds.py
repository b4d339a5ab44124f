"""The kinds of event a webhook can carry, and what each one's `data` is.

A kind names the in-transaction event (`ehs_core.events`) it follows and a
function making the payload's `data` from it. The core registers its six
with the same directive a plugin uses (`config.add_webhook_event`).

What leaves the service is what a supervisor may see of the incident and
its actions and comments, and no more: never who filed an anonymous report
(its reporter is not named, nor the actor of its filing), and nothing of the
injury records (the OSHA plugin's cases are not in any payload).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pyramid.config import Configurator

from ehs_core.directives import register_once
from ehs_core.events import (
    ActionCreated,
    ActionUpdated,
    CommentCreated,
    Event,
    IncidentCreated,
    IncidentTransitioned,
    IncidentUpdated,
)
from ehs_core.serialize import iso

KINDS_KEY = "ehs.webhook_kinds"
# Report fields whose change says who filed it: left out of `changes`.
REPORTER_FIELDS = frozenset({"reporterId", "reporter", "anonymous", "clientId"})


@dataclass(frozen=True)
class WebhookKind:
    name: str
    event: type[Event]
    data: Callable[[Any], dict[str, Any] | None]
    organization: Callable[[Any], int]
    schema: dict[str, Any]
    description: str


def kinds(registry: Any) -> dict[str, WebhookKind]:
    return registry.get(KINDS_KEY, {})


def add_webhook_event(config: Configurator, name: str, event: type[Event],
                      data: Callable[[Any], dict[str, Any] | None], *, schema: dict[str, Any],
                      description: str = "",
                      organization: Callable[[Any], int] | None = None) -> None:
    """Directive: a kind of webhook event. `data(event)` is the payload's
    `data` for the in-transaction `event` (None: nothing to send for this
    one); `schema` its JSON schema, for the OpenAPI document's `webhooks`;
    `organization(event)` the organization whose endpoints get it (by
    default `event.incident.organization_id`). Admins may then subscribe
    endpoints to `name`."""

    def register() -> None:
        config.registry.setdefault(KINDS_KEY, {})[name] = WebhookKind(
            name, event, data, organization or (lambda e: e.incident.organization_id), schema, description)

    register_once(config, "ehs.webhook_event", name, register)


# --- the core's kinds --------------------------------------------------------------

NULLABLE_STRING = {"type": ["string", "null"]}
NULLABLE_INT = {"type": ["integer", "null"]}
INCIDENT_SCHEMA = {
    "type": "object",
    "description": "The report as a supervisor sees it; `reporterId` is null for an anonymous report.",
    "properties": {
        "id": {"type": "integer"}, "number": NULLABLE_INT, "reference": NULLABLE_STRING,
        "title": {"type": "string"}, "type": {"type": "string"}, "severity": {"type": "string"},
        "status": {"type": "string"}, "siteId": {"type": "integer"}, "areaId": NULLABLE_INT,
        "occurredAt": {"type": "string", "format": "date-time"}, "description": NULLABLE_STRING,
        "locationDetail": NULLABLE_STRING, "immediateAction": NULLABLE_STRING,
        "anonymous": {"type": "boolean"}, "reporterId": NULLABLE_INT,
        "createdAt": {"type": "string", "format": "date-time"},
        "updatedAt": {"type": "string", "format": "date-time"},
        "closedAt": {"type": ["string", "null"], "format": "date-time"},
    },
    "required": ["id", "number", "title", "type", "severity", "status", "siteId", "anonymous", "reporterId"],
}
INCIDENT_REF_SCHEMA = {"type": "object", "properties": {"id": {"type": "integer"}, "number": NULLABLE_INT,
                                                        "reference": NULLABLE_STRING},
                       "required": ["id", "number"]}
CHANGES_SCHEMA = {"type": "object", "description": "Each changed field: {old, new}.",
                  "additionalProperties": {"type": "object", "properties": {"old": {}, "new": {}}}}
ACTION_SCHEMA = {
    "type": "object",
    "properties": {
        "id": {"type": "integer"}, "title": {"type": "string"}, "description": NULLABLE_STRING,
        "kind": NULLABLE_STRING, "status": {"type": "string"}, "assigneeId": NULLABLE_INT,
        "dueDate": {"type": ["string", "null"], "format": "date"}, "rootCauseId": NULLABLE_INT,
        "createdAt": {"type": "string", "format": "date-time"},
        "updatedAt": {"type": "string", "format": "date-time"},
        "doneAt": {"type": ["string", "null"], "format": "date-time"},
    },
    "required": ["id", "title", "status"],
}
COMMENT_SCHEMA = {"type": "object", "properties": {
    "id": {"type": "integer"}, "body": {"type": "string"}, "authorId": NULLABLE_INT,
    "createdAt": {"type": "string", "format": "date-time"}}, "required": ["id", "body", "authorId"]}


def _object(properties: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": list(properties)}


def incident_data(incident: Any) -> dict[str, Any]:
    anonymous = bool(incident.anonymous)
    return {
        "id": incident.id, "number": incident.number,
        "reference": incident.reference, "title": incident.title, "type": incident.type,
        "severity": incident.severity, "status": incident.status, "siteId": incident.site_id,
        "areaId": incident.area_id, "occurredAt": iso(incident.occurred_at),
        "description": incident.description, "locationDetail": incident.location_detail,
        "immediateAction": incident.immediate_action, "anonymous": anonymous,
        "reporterId": None if anonymous else incident.reporter_id,
        "createdAt": iso(incident.created_at), "updatedAt": iso(incident.updated_at),
        "closedAt": iso(incident.closed_at),
    }


def incident_ref(incident: Any) -> dict[str, Any]:
    return {"id": incident.id, "number": incident.number, "reference": incident.reference}


def visible_changes(changes: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in changes.items() if key not in REPORTER_FIELDS}


def action_data(action: Any) -> dict[str, Any]:
    return {"id": action.id, "title": action.title, "description": action.description, "kind": action.kind,
            "status": action.status, "assigneeId": action.assignee_id, "dueDate": iso(action.due_date),
            "rootCauseId": action.root_cause_id, "createdAt": iso(action.created_at),
            "updatedAt": iso(action.updated_at), "doneAt": iso(action.done_at)}


def _actor(event: Any) -> int | None:
    """Who did it: None for an anonymous report's filing and for kiosk links."""
    return event.actor_id


def includeme(config: Configurator) -> None:
    config.add_directive("add_webhook_event", add_webhook_event)
    actor = {"actorId": NULLABLE_INT}
    add = config.add_webhook_event
    add("incident.created", IncidentCreated,
        lambda e: {"incident": incident_data(e.incident), "actorId": _actor(e)},
        schema=_object({"incident": INCIDENT_SCHEMA, **actor}),
        description="A report was filed, from any face (the app, a kiosk link, an anonymous report).")
    add("incident.updated", IncidentUpdated,
        lambda e: ({"incident": incident_data(e.incident), "changes": changes, "actorId": _actor(e)}
                   if (changes := visible_changes(e.changes)) else None),
        schema=_object({"incident": INCIDENT_SCHEMA, "changes": CHANGES_SCHEMA, **actor}),
        description="Fields of a report were changed.")
    add("incident.transitioned", IncidentTransitioned,
        lambda e: {"incident": incident_data(e.incident), "from": e.source, "to": e.target, "note": e.note,
                   "actorId": _actor(e)},
        schema=_object({"incident": INCIDENT_SCHEMA, "from": {"type": "string"}, "to": {"type": "string"},
                        "note": NULLABLE_STRING, **actor}),
        description="A report moved in the workflow (triaged, investigated, closed, reopened…).")
    add("action.created", ActionCreated,
        lambda e: {"incident": incident_ref(e.incident), "action": action_data(e.action),
                   "actorId": _actor(e)},
        schema=_object({"incident": INCIDENT_REF_SCHEMA, "action": ACTION_SCHEMA, **actor}),
        description="A corrective action was added to a report.")
    add("action.updated", ActionUpdated,
        lambda e: {"incident": incident_ref(e.incident), "action": action_data(e.action),
                   "changes": e.changes, "actorId": _actor(e)},
        schema=_object({"incident": INCIDENT_REF_SCHEMA, "action": ACTION_SCHEMA, "changes": CHANGES_SCHEMA,
                        **actor}),
        description="A corrective action changed (assignee, due date, status…).")
    add("comment.created", CommentCreated,
        lambda e: {"incident": incident_ref(e.incident),
                   "comment": {"id": e.comment.id, "body": e.comment.body, "authorId": e.comment.author_id,
                               "createdAt": iso(e.comment.created_at)},
                   "actorId": _actor(e)},
        schema=_object({"incident": INCIDENT_REF_SCHEMA, "comment": COMMENT_SCHEMA, **actor}),
        description="Someone commented on a report.")


SIGNATURE_HEADERS = [
    {"name": "webhook-id", "in": "header", "required": True, "schema": {"type": "string"},
     "description": "The message's id, the same on every attempt: deduplicate by it."},
    {"name": "webhook-timestamp", "in": "header", "required": True, "schema": {"type": "string"},
     "description": "Unix seconds of this attempt; refuse one far from your clock."},
    {"name": "webhook-signature", "in": "header", "required": True, "schema": {"type": "string"},
     "description": "`v1,` and the base64 HMAC-SHA256 of `id.timestamp.body` keyed by the secret's "
                    "bytes (after `whsec_`), as the Standard Webhooks specification says."},
]


def openapi_webhooks(registry: Any) -> dict[str, Any]:
    """The OpenAPI 3.1 `webhooks` object: what each kind POSTs."""
    described = {}
    for name, kind in sorted(kinds(registry).items()):
        body = {"type": "object", "required": ["type", "timestamp", "data"], "properties": {
            "type": {"const": name}, "timestamp": {"type": "string", "format": "date-time"},
            "data": kind.schema}}
        described[name] = {"post": {
            "summary": kind.description, "operationId": f"webhook_{name.replace('.', '_')}",
            "parameters": SIGNATURE_HEADERS,
            "requestBody": {"required": True, "content": {"application/json": {"schema": body}}},
            "responses": {"2XX": {"description": "Received; any other answer is retried with backoff"}}}}
    return described
