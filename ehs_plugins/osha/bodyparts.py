"""The parts of the body a case may be coded with: the "Part of body
affected" structure of the Occupational Injury and Illness Classification
System (OIICS), version 2.01, U.S. Bureau of Labor Statistics, January 2012
(OIICS Manual, section 3.2 "Part of Body Affected": divisions and major
groups, with the titles BLS publishes in its Survey of Occupational Injuries
and Illnesses tables). Only the division (1 digit) and major-group (2 digit)
levels are offered; the neck, body systems, multiple body parts and other
body parts are offered as their division (BLS tabulates them so), and 9999
is "Nonclassifiable". In each division the OIICS keeps X0 for "unspecified",
X8 for "multiple ... locations" and X9 for "n.e.c." (not elsewhere
classified).

Why: Form 301 item 16 asks "What part of the body was affected?" and the
300 Log's column F "parts of body affected" (29 CFR 1904.29(b)(1)-(2)); a
code makes the answer countable (analytics by body part) while the words
written on the forms stay editable (`bodyPart`). The titles are the
plugin's translatable strings (domain `ehs_osha`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import colander
from pyramid.request import Request
from sqlalchemy import Select, select

from ehs_core.schemas import Str

VERSION = "OIICS 2.01"


def _(text: str) -> str:
    """Marks a title for the catalogue (`make messages`); translated when shown."""
    return text


@dataclass(frozen=True)
class BodyPart:
    code: str
    title: str
    # The division's code ("1" Head …); a division is its own.
    division: str
    # Where the picture's regions point to: "front", "back" or both.
    views: tuple[str, ...] = ("front", "back")


DIVISIONS: dict[str, str] = {
    "1": _("Head"),
    "2": _("Neck, including throat"),
    "3": _("Trunk"),
    "4": _("Upper extremities"),
    "5": _("Lower extremities"),
    "6": _("Body systems"),
    "8": _("Multiple body parts"),
    "9": _("Other body parts"),
    "9999": _("Nonclassifiable"),
}

_PARTS: tuple[tuple[str, str], ...] = (
    ("10", _("Head, unspecified")),
    ("11", _("Cranial region, including skull")),
    ("12", _("Eye(s)")),
    ("13", _("Ear(s)")),
    ("14", _("Face")),
    ("18", _("Multiple head locations")),
    ("19", _("Head, n.e.c.")),
    ("2", DIVISIONS["2"]),
    ("30", _("Trunk, unspecified")),
    ("31", _("Chest, including ribs, internal organs")),
    ("32", _("Back, including spine, spinal cord")),
    ("33", _("Abdomen")),
    ("34", _("Pelvic region")),
    ("38", _("Multiple trunk locations")),
    ("39", _("Trunk, n.e.c.")),
    ("40", _("Upper extremities, unspecified")),
    ("41", _("Shoulder, including clavicle, scapula")),
    ("42", _("Arm(s)")),
    ("43", _("Wrist(s)")),
    ("44", _("Hand(s), except finger(s)")),
    ("45", _("Finger(s), fingernail(s)")),
    ("48", _("Multiple upper extremities locations")),
    ("49", _("Upper extremities, n.e.c.")),
    ("50", _("Lower extremities, unspecified")),
    ("51", _("Hip(s)")),
    ("52", _("Leg(s)")),
    ("53", _("Ankle(s)")),
    ("54", _("Foot (feet), except toe(s)")),
    ("55", _("Toe(s), toenail(s)")),
    ("58", _("Multiple lower extremities locations")),
    ("59", _("Lower extremities, n.e.c.")),
    ("6", DIVISIONS["6"]),
    ("8", DIVISIONS["8"]),
    ("9", DIVISIONS["9"]),
    ("9999", DIVISIONS["9999"]),
)


def _division(code: str) -> str:
    return code if code in DIVISIONS else code[0]


PARTS: dict[str, BodyPart] = {code: BodyPart(code, title, _division(code)) for code, title in _PARTS}
CODES = tuple(PARTS)


def title(request: Request | None, code: str) -> str:
    """The code's title in the request's language (English without one)."""
    text = PARTS[code].title
    return request.localizer.translate(text, domain="ehs_osha") if request is not None else text


def grouped(request: Request) -> list[dict[str, Any]]:
    """The choices grouped by division, in code order, translated: what the
    form's <select> shows (one <optgroup> per division)."""
    groups: dict[str, dict[str, Any]] = {}
    for part in PARTS.values():
        group = groups.setdefault(part.division, {
            "code": part.division, "title": title_of_division(request, part.division), "parts": []})
        group["parts"].append({"code": part.code, "title": title(request, part.code)})
    return list(groups.values())


def title_of_division(request: Request | None, division: str) -> str:
    text = DIVISIONS[division]
    return request.localizer.translate(text, domain="ehs_osha") if request is not None else text


class BodyPartCode(Str):
    """`bodyPartCode`: an OIICS 2.01 part-of-body code of this list, or null."""

    openapi = {"enum": list(CODES),
               "description": f"{VERSION} part of body affected (division or major group)"}

    def check(self, node: colander.SchemaNode, value: Any) -> str:
        raw = super().check(node, value).strip()
        if raw not in PARTS:
            raise colander.Invalid(node, f"Must be a part-of-body code of {VERSION} (such as 44, Hand(s))")
        return raw


def prefill(request: Request | None, case: Any, data: dict[str, Any]) -> None:
    """A new `bodyPartCode` writes its title into `bodyPart` (Form 301 item
    16, and through it the 300 Log's column F) unless the same change gives
    `bodyPart` itself, or the words there were typed rather than prefilled
    (they differ from the former code's title): the code chooses, the words
    stay the person's to edit (issue #39 item 5)."""
    if "bodyPartCode" not in data or "bodyPart" in data:
        return
    new, old = data["bodyPartCode"], getattr(case, "body_part_code", None)
    if new == old:
        return
    current = (getattr(case, "body_part", None) or "").strip()
    prefilled = {PARTS[old].title, title(request, old)} if old in PARTS else set()
    if not current or current in prefilled:
        data["bodyPart"] = title(request, new) if new is not None else None


def words(case: Any) -> str | None:
    """What the forms write as the part of body: the case's own words, else
    its code's title (a coded case whose words were cleared still says
    which part on Form 301 item 16 and in the 300 Log's column F)."""
    text = getattr(case, "body_part", None)
    if text:
        return text
    code = getattr(case, "body_part_code", None)
    return PARTS[code].title if code in PARTS else None


def coded_cases() -> Select:
    """Every injured or ill person's case with its part of the body (NULL
    when not coded), for the analytics plugin to count per period
    (`add_injury_figures(body_parts=…)`): every case, not only the
    recordable ones, since first aid also shows where people get hurt."""
    from ehs_plugins.osha.models import InjuryCase

    return select(InjuryCase.incident_id.label("incident_id"), InjuryCase.body_part_code.label("code"))


def titles(request: Request) -> dict[str, str]:
    """Every code's title in the caller's language, in the list's order."""
    return {code: title(request, code) for code in CODES}
