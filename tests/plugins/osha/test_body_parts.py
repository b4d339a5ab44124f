"""Coded body parts (issue #39 item 5): a case's part of the body is an
OIICS 2.01 code (`bodyPartCode`), refused when not of the list; its title
prefills the words written on Form 301 item 16 and the 300 Log's column F
(`bodyPart`), which stay editable; the case form offers the codes as a
plain <select> grouped by division that works without JavaScript."""

from __future__ import annotations

import io
from html import unescape

import pytest
from pypdf import PdfReader

from ehs_plugins.osha.bodyparts import CODES, DIVISIONS, PARTS
from tests.plugins.osha import (
    OSHA,
    WORK,
    YEAR,
    add_case,
    get_log,
    issue_paths,
    new_case,
    new_incident,
    patch_case,
    recorded,
)

HAND = "Hand(s), except finger(s)"
FINGERS = "Finger(s), fingernail(s)"


@pytest.fixture
def injury(manager, site):
    return new_incident(manager, site)["number"]


# --- the list --------------------------------------------------------------------------


def test_the_list_holds_the_oiics_divisions_and_major_groups():
    assert {code: PARTS[code].title for code in ("11", "12", "13", "14", "2", "31", "32", "33", "34", "41",
                                                 "42", "43", "44", "45", "51", "52", "53", "54", "55")} == {
        "11": "Cranial region, including skull", "12": "Eye(s)", "13": "Ear(s)", "14": "Face",
        "2": "Neck, including throat", "31": "Chest, including ribs, internal organs",
        "32": "Back, including spine, spinal cord", "33": "Abdomen", "34": "Pelvic region",
        "41": "Shoulder, including clavicle, scapula", "42": "Arm(s)", "43": "Wrist(s)", "44": HAND,
        "45": FINGERS, "51": "Hip(s)", "52": "Leg(s)", "53": "Ankle(s)", "54": "Foot (feet), except toe(s)",
        "55": "Toe(s), toenail(s)"}
    # Every code sits in its division; 9999 is nonclassifiable.
    assert all(PARTS[code].division in DIVISIONS for code in CODES)
    assert PARTS["44"].division == "4" and PARTS["9999"].title == "Nonclassifiable"


# --- the API ---------------------------------------------------------------------------


@pytest.mark.parametrize("code", ["77", "4 4", "Hand", "", 44, ["44"]])
def test_an_unknown_code_is_refused_naming_the_field(manager, injury, code):
    assert issue_paths(add_case(manager, injury, bodyPartCode=code, status=400)) == {"bodyPartCode"}
    case = new_case(manager, injury)
    assert issue_paths(patch_case(manager, case["id"], status=400, bodyPartCode=code)) == {"bodyPartCode"}
    assert manager.get(f"{OSHA}/incidents/{injury}/cases").json[0]["bodyPartCode"] is None


def test_a_known_code_is_kept_and_prefills_the_words(manager, injury):
    case = new_case(manager, injury, bodyPartCode="44")
    assert (case["bodyPartCode"], case["bodyPart"]) == ("44", HAND)
    # Another choice: the words were the former title, so they follow.
    case = patch_case(manager, case["id"], bodyPartCode="45").json
    assert (case["bodyPartCode"], case["bodyPart"]) == ("45", FINGERS)
    # No choice any more: the prefilled words go with it.
    case = patch_case(manager, case["id"], bodyPartCode=None).json
    assert (case["bodyPartCode"], case["bodyPart"]) == (None, None)


def test_the_words_stay_editable(manager, injury):
    case = new_case(manager, injury, bodyPartCode="45")
    case = patch_case(manager, case["id"], bodyPart="Left index finger, tip").json
    assert (case["bodyPartCode"], case["bodyPart"]) == ("45", "Left index finger, tip")
    # Typed words are not overwritten by a later choice ...
    case = patch_case(manager, case["id"], bodyPartCode="44").json
    assert (case["bodyPartCode"], case["bodyPart"]) == ("44", "Left index finger, tip")
    # ... and a change giving both keeps both as given.
    case = patch_case(manager, case["id"], bodyPartCode="12", bodyPart="Right eye").json
    assert (case["bodyPartCode"], case["bodyPart"]) == ("12", "Right eye")
    created = new_case(manager, injury, "John Doe", bodyPartCode="53", bodyPart="Left ankle")
    assert (created["bodyPartCode"], created["bodyPart"]) == ("53", "Left ankle")


def test_a_coded_case_is_not_missing_its_body_part(manager, injury):
    case = new_case(manager, injury, **WORK, medicalTreatment=True)
    assert "bodyPart" in case["missingFields"]
    case = patch_case(manager, case["id"], bodyPartCode="52").json
    assert "bodyPart" not in case["missingFields"]


# --- the 300 Log's column F and Form 301 -----------------------------------------------


def test_column_f_and_form_301_say_the_chosen_part(manager, site):
    case = recorded(manager, site, "Jane Roe", medicalTreatment=True, natureOfInjury="Laceration",
                    bodyPartCode="45", objectSubstance="Press ram")
    rows = {row["caseId"]: row for row in get_log(manager, site).json["rows"]}
    assert rows[case["id"]]["description"] == f"Laceration; {FINGERS}; Press ram"
    form = manager.get(f"{OSHA}/cases/{case['id']}/301").json
    assert (form["case"]["bodyPart"], form["case"]["bodyPartCode"]) == (FINGERS, "45")

    # Edited words are what the forms print.
    patch_case(manager, case["id"], bodyPart="Left index finger")
    rows = {row["caseId"]: row for row in get_log(manager, site).json["rows"]}
    assert rows[case["id"]]["description"] == "Laceration; Left index finger; Press ram"
    log_page = manager.get("/osha/log/print", {"siteId": site, "year": YEAR})
    assert "Laceration; Left index finger; Press ram" in unescape(log_page.text)
    page = manager.get(f"/osha/cases/{case['id']}/301")
    assert "Laceration; Left index finger" in unescape(page.text)
    pdf = PdfReader(io.BytesIO(manager.get(f"/osha/cases/{case['id']}/301.pdf").body))
    assert "Left index finger" in " ".join(p.extract_text() for p in pdf.pages)


def test_cleared_words_fall_back_to_the_codes_title_on_the_forms(manager, site):
    case = recorded(manager, site, "Jane Roe", medicalTreatment=True, natureOfInjury="Fracture",
                    bodyPartCode="53")
    patch_case(manager, case["id"], bodyPart=None)
    rows = {row["caseId"]: row for row in get_log(manager, site).json["rows"]}
    assert rows[case["id"]]["description"] == "Fracture; Ankle(s)"
    log_pdf = PdfReader(io.BytesIO(manager.get("/osha/log.pdf", {"siteId": site, "year": YEAR}).body))
    assert "Fracture; Ankle(s)" in " ".join(p.extract_text() for p in log_pdf.pages)


# --- the case form, without JavaScript --------------------------------------------------


def case_form(page):
    return next(f for f in page.forms.values() if f.action.startswith("/osha/cases/")
                and f.action.count("/") == 3)


def test_the_form_offers_the_codes_as_a_select_grouped_by_division(manager, injury):
    case = new_case(manager, injury)
    page = manager.get(f"/osha/cases/{case['id']}")
    select = page.html.find("select", id="bodyPartCode")
    assert page.html.find("label", attrs={"for": "bodyPartCode"}) is not None
    groups = {group["label"]: [o["value"] for o in group.find_all("option")]
              for group in select.find_all("optgroup")}
    assert groups["Upper extremities"] == ["40", "41", "42", "43", "44", "45", "48", "49"]
    assert groups["Head"][:5] == ["10", "11", "12", "13", "14"]
    # The picture is only shown by the script, and hidden from screen readers.
    picker = page.html.find(attrs={"data-body-picker": True})
    assert picker.has_attr("hidden") and picker.find("svg")["aria-hidden"] == "true"
    assert {region["data-code"] for region in picker.find_all(class_="region")} >= {"12", "32", "44", "55"}
    assert "<script>" not in page.text and " style=" not in page.text


def test_choosing_from_the_select_without_javascript_saves_the_code_and_its_words(manager, injury):
    case = new_case(manager, injury, bodyPart=None)
    form = case_form(manager.get(f"/osha/cases/{case['id']}"))
    form["bodyPartCode"] = "12"
    saved = form.submit(status=302).follow()
    stored = manager.get(f"{OSHA}/incidents/{injury}/cases").json[0]
    assert (stored["bodyPartCode"], stored["bodyPart"]) == ("12", "Eye(s)")
    assert saved.html.find("select", id="bodyPartCode").find("option", selected=True)["value"] == "12"
    # Words typed on the form win; another choice keeps them.
    form = case_form(saved)
    form["bodyPart"] = "Right eye, cornea"
    form["bodyPartCode"] = "14"
    form.submit(status=302)
    stored = manager.get(f"{OSHA}/incidents/{injury}/cases").json[0]
    assert (stored["bodyPartCode"], stored["bodyPart"]) == ("14", "Right eye, cornea")


def test_a_forged_code_is_shown_as_the_fields_error(manager, injury):
    case = new_case(manager, injury)
    form = case_form(manager.get(f"/osha/cases/{case['id']}"))
    fields = [(k, v) for k, v in form.submit_fields() if k != "bodyPartCode"] + [("bodyPartCode", "77")]
    refused = manager.post(form.action, fields, status=400)
    assert 'href="#bodyPartCode"' in refused.text
    assert refused.html.find("select", id="bodyPartCode")["aria-invalid"] == "true"
    assert manager.get(f"{OSHA}/incidents/{injury}/cases").json[0]["bodyPartCode"] is None
