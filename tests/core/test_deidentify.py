"""The shared de-identification (`ehs_core.deidentify`): what the violent
incident log and the ITA file replace in free text."""

from __future__ import annotations

import pytest

from ehs_core.deidentify import deidentify, remove_name, scrub_identifiers


@pytest.mark.parametrize(("text", "expected"), [
    ("Call 510-555-0142 or (415) 555 0199", "Call [phone] or [phone]"),
    ("Wrote to j.doe+x@mail.example.com", "Wrote to [e-mail]"),
    ("SSN 123-45-6789 on the form", "SSN [number] on the form"),
    ("badge #A-2231 and employee no. 4411", "[number] and [number]"),
    ("Lives at 1200 Harbor Blvd. near the port", "Lives at [address] near the port"),
    ("Mr. Okafor shouted. Then Dr Ruth Mbeki came", "A person shouted. Then a person came"),
    ("mr. and mrs. smith? no: the mister left", "mr. and mrs. smith? no: the mister left"),
    ("Bay 4, station 17, 3 boxes", "Bay 4, station 17, 3 boxes"),
    ("", ""),
    (None, None),
])
def test_identifiers_are_replaced_and_ordinary_text_is_kept(text, expected):
    assert scrub_identifiers(text) == expected


def test_named_people_and_their_identifiers_go_together():
    text = "Keisha Brown was pushed by Dmitri Volkov; keisha called 510-555-0142. Mark the spill."
    assert deidentify(text, ["Keisha Brown", "Dmitri Volkov", "Mark Hall"]) == \
        "A person was pushed by a person; a person called [phone]. Mark the spill."


def test_the_osha_replacement_is_unchanged_by_default():
    assert remove_name("Zed Quill slipped", "Zed Quill") == "The employee slipped"
    assert remove_name("Zed Quill slipped", "Zed Quill", "a person") == "A person slipped"
