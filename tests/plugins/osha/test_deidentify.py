"""The person's name out of the ITA case file's text (1904.29(b)(10),
1904.41(b)), and other likely identifiers found for review: the rules of
`ehs_plugins.osha.deidentify` one by one, then through the downloaded file
and the ITA checks."""

from __future__ import annotations

import csv
import io
from typing import Any

import pytest

from ehs_plugins.osha.deidentify import identifiers, remove_name
from tests.plugins.osha import FORM_301, OSHA, WORK, full_year, get_log, new_case, new_incident, put_hours


@pytest.mark.parametrize(("name", "text", "expected"), [
    # The case from the issue: a title and the last name alone.
    ("Zed Quill", "Mr Quill slipped on oil near the press", "The employee slipped on oil near the press"),
    ("Zed Quill", "Zed slipped; Quill's glove tore", "The employee slipped; the employee's glove tore"),
    ("Zed Quill", "Zed Quill slipped", "The employee slipped"),
    ("Zed Quill", "the guard told zed quill to stop", "the guard told the employee to stop"),
    # Whole words only: "Zed" is not taken out of "Zedong Street", nor "Quill" out of "quills".
    ("Zed Quill", "Boxes of quills on Zedong Street", "Boxes of quills on Zedong Street"),
    # Accents and case do not hide a name, either way round.
    ("José Núñez", "Jose Nunez cut his hand; NÚÑEZ was alone",
     "The employee cut his hand; the employee was alone"),
    ("Zoe Brandt", "Zoë fell from the ladder", "The employee fell from the ladder"),
    ("Anne-Marie Dubois", "Anne-Marie Dubois fell. Marie got up", "The employee fell. The employee got up"),
    ("Dr. Ruth Hale", "Mrs. Hale tripped", "The employee tripped"),
    # A name that is also a word: gone where it names the person, kept where it is the word.
    ("Mark Lee", "Mark slipped on the oil", "The employee slipped on the oil"),
    ("Mark Lee", "He was told to mark the spill before Mark cleaned it",
     "He was told to mark the spill before the employee cleaned it"),
    ("Mark Lee", "Mark the spill with tape. Then Mark fell",
     "Mark the spill with tape. Then the employee fell"),
    ("Mark Lee", "later mark lee fell", "later the employee fell"),
    ("Mark Lee", "mr mark fell", "the employee fell"),
    ("Will Rose", "Will it hold? Will said it would", "Will it hold? The employee said it would"),
    # Initials alone are left (they would take every "a" and "I" with them).
    ("J Roe", "I saw J Roe fall", "I saw J the employee fall"),
])
def test_every_part_of_the_name_is_removed(name: str, text: str, expected: str) -> None:
    assert remove_name(text, name) == expected


@pytest.mark.parametrize(("text", "kinds"), [
    ("Call him on 617-555-0199 after the shift", ["phone number"]),
    ("Reported by (617) 555 0199", ["phone number"]),
    ("Sent to jo.roe@acme.test by the lead", ["e-mail address"]),
    ("Employee no. 44110 was at the press", ["employee number"]),
    ("Badge #A-2231 found by the door", ["employee number"]),
    ("SSN 123-45-6789 on the form", ["social security number"]),
    # Numbers of an ordinary narrative are not identifiers.
    ("Lifted a 25 kg box 3 times at 12:30 on 2025-03-10, press 4, 1,200 lb", []),
    ("Fell 2 m from a ladder; 180 days", []),
])
def test_likely_identifiers_are_found(text: str, kinds: list[str]) -> None:
    assert identifiers(text) == kinds


# --- through the file and the checks -------------------------------------------


def case_file(browser: Any) -> list[dict[str, str]]:
    text = browser.get(f"{OSHA}/ita/cases.csv", {"year": 2025}, status=200).text
    return list(csv.DictReader(io.StringIO(text, newline="")))


def test_case_file_narratives_hold_no_part_of_the_name(manager: Any, site: int) -> None:
    number = new_incident(manager, site, title="Quill hurt at the press",
                          locationDetail="Zed's bench")["number"]
    new_case(manager, number, "Zed Quill", **WORK, daysAway=2, **{
        **FORM_301, "activityBefore": "Zed was cleaning the press; Mr Quill had stopped it",
        "whatHappened": "Mr Quill slipped on oil near the press",
        "objectSubstance": "Oil left by QUILL", "natureOfInjury": "Sprain (zed's words)", "bodyPart": None})
    (row,) = case_file(manager)
    assert row["nar_what_happened"] == "The employee slipped on oil near the press"
    assert row["nar_before_incident"] == "The employee was cleaning the press; the employee had stopped it"
    text = " ".join(row.values()).casefold()
    assert "zed" not in text and "quill" not in text


def test_case_file_keeps_a_common_word_that_is_not_the_name(manager: Any, site: int) -> None:
    number = new_incident(manager, site)["number"]
    new_case(manager, number, "Mark Zielinski", **WORK, daysAway=2, **{
        **FORM_301, "activityBefore": "Asked to mark the spill with cones",
        "whatHappened": "Mark slipped before the spill was marked"})
    (row,) = case_file(manager)
    assert row["nar_before_incident"] == "Asked to mark the spill with cones"
    assert row["nar_what_happened"] == "The employee slipped before the spill was marked"


def test_identifiers_and_refused_characters_are_ita_checks_naming_the_case(manager: Any, site: int) -> None:
    put_hours(manager, site, full_year(10_000, 50))
    number = new_incident(manager, site)["number"]
    case = new_case(manager, number, **WORK, daysAway=2, **{
        **FORM_301, "whatHappened": "Call 617-555-0199 or ann@acme.test about it",
        "activityBefore": "Loading blanks (press 4)"})
    found = {(c["caseId"], c["caseNumber"], c["field"], c["level"], c["siteId"])
             for c in get_log(manager, site).json["checks"]}
    assert found == {
        (case["id"], case["caseNumber"], "nar_what_happened", "warning", site),  # phone number
        (case["id"], case["caseNumber"], "nar_before_incident", "error", site),  # ( and )
        (case["id"], case["caseNumber"], "nar_what_happened", "error", site),  # @
    }
    messages = [c["message"] for c in get_log(manager, site).json["checks"]]
    assert any("phone number" in m and "whatHappened" in m for m in messages)
    assert any("e-mail address" in m for m in messages)
    assert any("( )" in m and "activityBefore" in m for m in messages)


def test_refused_characters_in_the_establishment_are_checks_on_the_site(manager: Any, site: int) -> None:
    put_hours(manager, site, full_year(10_000, 50))
    manager.patch_json(f"/api/sites/{site}", {"city": "Springfield!"}, status=200)
    checks = get_log(manager, site).json["checks"]
    assert [(c["field"], c["caseId"], c["level"]) for c in checks] == [("city", None, "error")]
