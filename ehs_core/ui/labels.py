"""The words of the core's enumeration values (types, severities, statuses,
roles, kinds), marked so that `make messages` extracts them and the
`label` filter shows them in the reader's language (issue #39). A value
not named here is shown as its words ("some_value" -> "Some value")."""

from __future__ import annotations


def _(text: str) -> str:
    """Marks a message for extraction; translated where shown."""
    return text


LABELS: dict[str, str] = {
    # Incident types
    "near_miss": _("Near miss"), "hazard": _("Hazard"), "injury": _("Injury"), "illness": _("Illness"),
    "property_damage": _("Property damage"), "environmental": _("Environmental"),
    # Severities
    "low": _("Low"), "medium": _("Medium"), "high": _("High"), "critical": _("Critical"),
    # Incident statuses
    "reported": _("Reported"), "triage": _("Triage"), "investigation": _("Investigation"),
    "actions": _("Actions"), "verification": _("Verification"), "closed": _("Closed"),
    # Action and obligation statuses
    "open": _("Open"), "in_progress": _("In progress"), "done": _("Done"), "verified": _("Verified"),
    "cancelled": _("Cancelled"), "waived": _("Waived"),
    # Roles
    "reporter": _("Reporter"), "supervisor": _("Supervisor"), "safety_manager": _("Safety manager"),
    "admin": _("Admin"),
    # Area kinds
    "building": _("Building"), "area": _("Area"), "line": _("Line"), "other": _("Other"),
}
