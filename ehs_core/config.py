"""The composition root: the one way the application is assembled, used by
the WSGI factory, the `ehs` command, the job worker and alembic alike."""

from __future__ import annotations

from typing import Any

from pyramid.config import Configurator

from ehs_core import plugins
from ehs_core.settings import load


def configure(raw_settings: dict[str, Any]) -> Configurator:
    settings = load(raw_settings)
    config = Configurator(settings=settings)
    # Order matters: directives first, then what uses them.
    config.include("ehs_core.settings")  # add_setting
    config.include("ehs_core.plugins")  # add_migrations
    config.include("ehs_core.security")  # add_identity_provider, policy, deny by default
    config.include("ehs_core.db")  # engine, request.dbsession, pyramid_tm, pyramid_retry
    config.include("ehs_core.refdata")  # track_reference_model: per-worker caches kept current
    config.include("ehs_core.migrations")  # the core's alembic history
    config.include("ehs_core.requestlog")  # X-Request-Id on requests and log lines
    config.include("ehs_core.errors")  # one JSON error shape
    config.include("ehs_core.responseheaders")  # no-store and nosniff on every /api answer
    config.include("ehs_core.validation")  # body=/query= view options, validated before the view
    config.include("ehs_core.intake")  # body size limits, UTF-8 query strings
    config.include("ehs_core.jobs")  # huey, add_job, add_periodic_job
    config.include("ehs_core.mail")  # add_mail_template, mail delivery job
    config.include("ehs_core.ui")  # templates, layout, add_nav_item/add_incident_panel/add_dashboard_card
    config.include("ehs_core.ui.first_steps")  # add_first_step: the admin's first hour, on home
    config.include("ehs_core.auth")  # sessions, setup, sign-in, origin check
    config.include("ehs_core.health")  # liveness, readiness
    config.include("ehs_core.metrics")  # GET /metrics (Prometheus)
    config.include("ehs_core.users")
    config.include("ehs_core.sites")
    config.include("ehs_core.incidents")  # add_incident_section, add_incident_filter
    config.include("ehs_core.workflow")  # add_transition_guard, transitions
    config.include("ehs_core.audit")  # timeline
    config.include("ehs_core.investigation")
    config.include("ehs_core.actions")  # also the daily digest job
    config.include("ehs_core.attachments")
    config.include("ehs_core.people")  # the people involved; add_person_action
    config.include("ehs_core.obligations")  # add_obligation_kind, the queue of what is owed to regulators
    config.include("ehs_core.followup")  # a report filed without a name: its code and thread
    config.include("ehs_core.webhooks")  # add_webhook_event; signed deliveries of the events above
    config.include("ehs_core.seed")  # add_seeder, for `ehs seed`
    config.include("ehs_core.openapi")  # /api/openapi.json, built from the registrations
    config.commit()
    # Plugins come last and use the same directives the core used above.
    plugins.include_enabled(config, settings["ehs.plugins"])
    config.commit()
    return config
