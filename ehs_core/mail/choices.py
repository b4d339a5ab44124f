"""Which follow-up mails a person gets. The notices the spec requires (a
serious report to safety managers and admins, an action to its assignee,
sign-in and invitation links) always go out; the follow-ups below keep
people in the loop and each can be turned off on the account page
(issue #36 item 10). The choice is stored with the user (`users.mail_off`)."""

from __future__ import annotations

from typing import Any

from pyramid.i18n import TranslationStringFactory

from ehs_core.errors import invalid

_ = TranslationStringFactory("ehs")

# kind -> what the person gets, as the account page names it.
OPTIONAL_MAIL = {
    "report_followup": _("When a report I filed is closed or reopened"),
    "lead_named": _("When I am named an incident's investigation lead"),
    "actions_done": _("When every action of an incident I follow is done"),
    "site_serious": _("High and critical reports at my sites (supervisors)"),
    "follow_up_answer": _("When the reporter of an incident I follow answers its follow-up"),
}


def wants(user: Any, kind: str) -> bool:
    """Whether `user` (active) still gets mail of this kind."""
    return bool(user.active) and kind not in (user.mail_off or [])


def set_mail_off(user: Any, kinds: list[str]) -> None:
    """Turn off exactly these kinds (the others are on)."""
    unknown = [kind for kind in kinds if kind not in OPTIONAL_MAIL]
    if unknown:
        raise invalid("mailOff", f"Unknown kind of mail: {unknown[0][:50]}")
    user.mail_off = sorted(set(kinds)) or None
