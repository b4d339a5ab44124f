"""Injury and illness recordkeeping (29 CFR Part 1904): cases, the 300 Log
and 300A, Form 301, hours, rates and the ITA electronic-submission files.
Every endpoint needs safety_manager; everyone who may see an incident sees
only how many people were hurt (`injuredCount`)."""

from pyramid.config import Configurator

ROOT = "ehs_plugins.osha.views.OshaRoot"


def includeme(config: Configurator) -> None:
    from ehs_plugins.osha.views import injured_count

    config.add_migrations("osha", "ehs_plugins.osha:migrations/versions")
    config.add_incident_section("injuredCount", injured_count)
    config.add_mail_template("osha_severe_report", "ehs_plugins.osha:templates/severe_report.txt")
    incident = r"/api/osha/incidents/{number:\d{1,9}}"
    config.add_route("osha.incident_cases", incident + "/cases", factory=ROOT)
    config.add_route("osha.case", r"/api/osha/cases/{id:\d{1,9}}", factory=ROOT)
    config.add_route("osha.case_301", r"/api/osha/cases/{id:\d{1,9}}/301", factory=ROOT)
    config.add_route("osha.log", "/api/osha/log", factory=ROOT)
    config.add_route("osha.site_hours", r"/api/osha/sites/{id:\d{1,9}}/hours", factory=ROOT)
    config.add_route("osha.ita_summary", "/api/osha/ita/summary.csv", factory=ROOT)
    config.add_route("osha.ita_cases", "/api/osha/ita/cases.csv", factory=ROOT)
    config.scan(".views")
    config.scan(".reports")
