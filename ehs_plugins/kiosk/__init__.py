"""Reporting links ("kiosk"): people without accounts file reports from a QR
code or a shared tablet. The link's token, sent as `X-Kiosk-Token`, can read
the link's configuration and file reports, nothing else."""

from pyramid.config import Configurator

from ehs_plugins.kiosk.listeners import channel_section, kiosk_section, link_column, link_reporter
from ehs_plugins.kiosk.security import kiosk_identity


def includeme(config: Configurator) -> None:
    config.add_migrations("kiosk", "ehs_plugins.kiosk:migrations/versions")
    config.add_identity_provider("kiosk", kiosk_identity)
    config.add_security_scheme("kioskToken", {"type": "apiKey", "in": "header", "name": "X-Kiosk-Token"})
    # A report the API has just filed came from the web, not a kiosk link.
    config.add_incident_section("channel", column=link_column, decode=channel_section, fresh=lambda: "web")
    config.add_incident_section("kiosk", column=link_column, decode=kiosk_section, fresh=lambda: None)
    # Who filed a report through a link: on the incident page, in its history and the export.
    config.add_reporter_source("kiosk", link_reporter)

    config.add_route("kiosks", "/api/kiosks", factory="ehs_plugins.kiosk.views.KioskAdmin")
    config.add_route("kiosk", r"/api/kiosks/{id:\d{1,9}}", factory="ehs_plugins.kiosk.views.KioskAdmin")
    config.add_route("kiosk.config", "/api/kiosk/config",
                     factory="ehs_plugins.kiosk.security.KioskRoot")
    config.add_route("kiosk.reports", "/api/kiosk/reports",
                     factory="ehs_plugins.kiosk.security.KioskRoot")
    # The link's page works offline (offline.py): its worker, one for every
    # link, is served from /k/ so that it may control a link's page.
    config.add_route("kiosk.worker", "/k/offline-worker.js")
    config.add_route("kiosk.page", "/k/{token}")
    config.add_route("kiosk.page_report", "/k/{token}/report")
    config.add_route("kiosk.page_thanks", "/k/{token}/thanks")
    config.add_route("kiosk.manifest", "/k/{token}/manifest.webmanifest")
    config.add_static_view("kiosk-static", "ehs_plugins.kiosk:static", cache_max_age=3600)
    config.scan(".views")
    config.scan(".offline")
    config.include(".pages")
    config.add_translation_dirs("ehs_plugins.kiosk:locale")
