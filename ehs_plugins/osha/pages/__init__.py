"""The OSHA plugin's screens, added through the core's page directives
(docs/plugins.md, "Screens"): the cases panel on the incident page, the case
form, the 300 Log, the 300A and its certification, the hours grid, Form 301,
the printable forms and their PDFs, the electronic submission, and cards on
the home page. Each page is a thin adapter over the plugin's operations
(`services`, `log`, `hours`, `certification`, `checks`, `ita`), with the
API's schemas and its one permission: safety managers only."""

from __future__ import annotations

from typing import Any

from pyramid.config import Configurator
from pyramid.request import Request

from ehs_plugins.osha.recordability import CaseType, EmploymentType, Outcome, SpecialCase

ROOT = "ehs_plugins.osha.views.OshaRoot"
TEMPLATES = "ehs_plugins.osha:templates/pages/"

# How the outcome and type columns read on the page (Form 300's own words).
OUTCOME_LABELS = {
    Outcome.death: "Death (column G)",
    Outcome.days_away: "Days away from work (column H)",
    Outcome.restricted: "Job transfer or restriction (column I)",
    Outcome.other_recordable: "Other recordable case (column J)",
}
TYPE_LABELS = {
    CaseType.injury: "Injury (M1)", CaseType.skin_disorder: "Skin disorder (M2)",
    CaseType.respiratory_condition: "Respiratory condition (M3)", CaseType.poisoning: "Poisoning (M4)",
    CaseType.hearing_loss: "Hearing loss (M5)", CaseType.other_illness: "All other illnesses (M6)",
}
EMPLOYMENT_LABELS = {
    EmploymentType.employee: "Our employee",
    EmploymentType.temporary_worker: "Temporary worker we supervise day to day",
    EmploymentType.contractor: "Contractor's employee",
    EmploymentType.visitor: "Visitor or member of the public",
}
SPECIAL_LABELS = {
    SpecialCase.none: "None",
    SpecialCase.needlestick: "Needlestick or sharps injury (1904.8)",
    SpecialCase.medical_removal: "Medical removal under an OSHA standard (1904.9)",
    SpecialCase.hearing_loss: "Hearing loss: standard threshold shift (1904.10)",
    SpecialCase.tuberculosis: "Tuberculosis from work exposure (1904.11)",
}


def labels(request: Request) -> dict[str, dict[str, str]]:
    """The label tables, translated in the plugin's domain."""
    t = request.localizer.translate

    def tr(table: dict[Any, str]) -> dict[str, str]:
        return {key.value: t(text, domain="ehs_osha") for key, text in table.items()}

    return {"outcomes": tr(OUTCOME_LABELS), "types": tr(TYPE_LABELS),
            "employment": tr(EMPLOYMENT_LABELS), "special": tr(SPECIAL_LABELS)}


def includeme(config: Configurator) -> None:
    config.add_static_view("osha-static", "ehs_plugins.osha:static", cache_max_age=3600)
    config.include(".cases")
    config.include(".records")
    config.include(".printing")
    config.include(".submission")
    config.include(".cards")
    config.include(".access")
