"""California: Title 8 CCR §342(a)'s 8-hour report of a serious injury or
death to Cal/OSHA, and Labor Code §6401.9's violent incident log (SB 553),
for sites whose state is CA. Both ride on the core's obligations: the
report is an obligation due 8 hours after the employer learned, an
employee's request for the log one due in 15 calendar days. Written from
docs/plugins.md alone."""

from __future__ import annotations

import datetime as dt

from pyramid.config import Configurator

from ehs_core.security import Permission

ROOT = "ehs_plugins.calosha.views.CaloshaRoot"


def office(value: str) -> str:
    """The district office's contact as the setting gives it (any text)."""
    return value.strip()


def includeme(config: Configurator) -> None:
    from ehs_plugins.calosha import requests, serious
    from ehs_plugins.calosha.views import serious_section, violence_section

    config.add_migrations("calosha", "ehs_plugins.calosha:migrations/versions")
    district = config.add_setting("calosha.district_office", "EHS_CALOSHA_DISTRICT_OFFICE", office, "")
    where = f" ({district})" if district else ""
    config.add_obligation_kind(
        serious.KIND, title="Cal/OSHA serious injury report (T8 CCR §342)", handled_by="supervisor",
        fulfilled_by=f"By phone or e-mail to the nearest Cal/OSHA district office{where}, within 8 hours "
                     "of learning of it; separate from any federal OSHA report",
        remind_before=dt.timedelta(hours=2))
    config.add_obligation_kind(
        requests.KIND, title="Copy of the violent incident log (Labor Code §6401.9)",
        handled_by="safety_manager",
        fulfilled_by="Give the employee the log (its printable page or CSV), within 15 calendar days",
        remind_before=dt.timedelta(days=3))
    config.add_incident_section("workplaceViolence", violence_section, detail_only=True,
                                permission=Permission.manage_investigation, fresh=lambda: None)
    config.add_incident_section("seriousInjury", serious_section, detail_only=True,
                                permission=Permission.manage_investigation, fresh=lambda: None)
    config.add_restricted_audit_action("calosha.violence_entry", "ehs_plugins.calosha.pages.may_see_entries")
    incident = r"/api/calosha/incidents/{number:\d{1,9}}"
    factory = "ehs_core.incidents.resources.incident_factory"
    config.add_route("calosha.violence", incident + "/violence", factory=factory)
    config.add_route("calosha.serious", incident + "/serious", factory=factory)
    config.add_route("calosha.log", "/api/calosha/violent-incident-log", factory=ROOT)
    config.add_route("calosha.log_csv", "/api/calosha/violent-incident-log.csv", factory=ROOT)
    config.add_route("calosha.log_requests", "/api/calosha/log-requests", factory=ROOT)
    config.scan(".views")
    config.include(".pages")
    config.add_translation_dirs("ehs_plugins.calosha:locale")
