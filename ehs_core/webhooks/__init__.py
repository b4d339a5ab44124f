"""Signed webhooks: admins register endpoints, and each event they chose is
POSTed to them as `{type, timestamp, data}`, signed as the Standard Webhooks
specification says, kept in the database from the change's own transaction
and retried until delivered (`delivery`). Plugins add kinds of event with
`config.add_webhook_event` (`kinds`)."""

from __future__ import annotations

from huey import crontab
from pyramid.config import Configurator

from ehs_core.events import Event
from ehs_core.settings import boolean, positive_int
from ehs_core.webhooks import delivery, services
from ehs_core.webhooks.models import WebhookEndpoint

RETRY_JOB = "webhooks.retry"


def _hosts(value: str) -> frozenset[str]:
    return frozenset(h.strip().lower() for h in value.replace(",", " ").split() if h.strip())


def includeme(config: Configurator) -> None:
    add = config.add_setting
    add("webhooks.allow_private", "EHS_WEBHOOK_ALLOW_PRIVATE", boolean, "false")
    add("webhooks.http_hosts", "EHS_WEBHOOK_HTTP_HOSTS", _hosts, "")
    add("webhooks.retry_delay", "EHS_WEBHOOK_RETRY_DELAY", positive_int, "60")
    add("webhooks.max_attempts", "EHS_WEBHOOK_MAX_ATTEMPTS", positive_int, "10")
    add("webhooks.disable_after", "EHS_WEBHOOK_DISABLE_AFTER", positive_int, "5")
    config.include(".kinds")  # add_webhook_event, the core's six kinds
    config.add_mail_template("webhooks.disabled", "ehs_core.webhooks:templates/disabled.txt")
    config.add_job(services.SEND_JOB, delivery.send_due)
    config.add_periodic_job(RETRY_JOB, delivery.send_due, crontab(minute="*"))
    # The endpoints each change looks up are kept per worker (services._subscribed).
    config.track_reference_model(WebhookEndpoint)
    config.add_route("webhooks", "/api/webhooks")
    config.add_route("webhook", r"/api/webhooks/{id:\d{1,9}}")
    config.add_route("webhook.deliveries", r"/api/webhooks/{id:\d{1,9}}/deliveries")
    config.scan(".views")
    # Every in-transaction event, so that kinds plugins add later follow theirs.
    config.add_subscriber(services.record_deliveries, Event)
    config.include(".pages")  # /admin/webhooks
