"""`classify` is the one pure function that decides recordability (1904.4-1904.11),
the 300 Log outcome column (G death > H days away > I restricted/transfer >
J other recordable), the type column M and privacy; `size_code` maps the peak
headcount to the ITA size code. Both are tested as tables."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from ehs_plugins.osha.recordability import RULES, Answers, CaseType, Outcome, classify, size_code

G, H, I, J = Outcome.death, Outcome.days_away, Outcome.restricted, Outcome.other_recordable  # noqa: E741
M1, M2, M3, M4, M5, M6 = (CaseType.injury, CaseType.skin_disorder, CaseType.respiratory_condition,
                          CaseType.poisoning, CaseType.hearing_loss, CaseType.other_illness)
WORK: dict[str, Any] = {"work_related": True, "new_case": True}

# (id, answers, recordable, outcome, case type, privacy)
TABLE: list[tuple[str, dict[str, Any], bool, Outcome | None, CaseType | None, bool]] = [
    # No criterion met: first aid only.
    ("first-aid-only", {**WORK, "case_type": "injury"}, False, None, M1, False),
    ("nothing-answered", {}, False, None, None, False),
    # General criteria, 1904.7(b), each alone.
    ("death", {**WORK, "died": True}, True, G, None, False),
    ("days-away-flag", {**WORK, "days_away_from_work": True}, True, H, None, False),
    ("days-away-count", {**WORK, "days_away": 3}, True, H, None, False),
    ("restricted-flag", {**WORK, "restricted_or_transfer": True}, True, I, None, False),
    ("restricted-count", {**WORK, "days_restricted": 2}, True, I, None, False),
    ("medical-treatment", {**WORK, "medical_treatment": True}, True, J, None, False),
    ("loss-of-consciousness", {**WORK, "loss_of_consciousness": True}, True, J, None, False),
    ("significant-diagnosis", {**WORK, "significant_diagnosis": True}, True, J, None, False),
    # The single most serious outcome: G > H > I > J.
    ("G-over-H-I-J", {**WORK, "died": True, "days_away_from_work": True, "days_away": 4,
                      "restricted_or_transfer": True, "days_restricted": 2, "medical_treatment": True},
     True, G, None, False),
    ("H-over-I-J", {**WORK, "days_away_from_work": True, "days_away": 4, "restricted_or_transfer": True,
                    "days_restricted": 9, "medical_treatment": True, "loss_of_consciousness": True},
     True, H, None, False),
    ("H-by-count-over-I-by-count", {**WORK, "days_away": 1, "days_restricted": 30}, True, H, None, False),
    ("I-over-J", {**WORK, "restricted_or_transfer": True, "days_restricted": 5, "medical_treatment": True,
                  "loss_of_consciousness": True, "significant_diagnosis": True}, True, I, None, False),
    ("G-over-J", {**WORK, "died": True, "significant_diagnosis": True}, True, G, None, False),
    # 1904.8 needlestick/sharps: an injury and a privacy case; an illness after seroconversion.
    ("needlestick", {**WORK, "special_case": "needlestick"}, True, J, M1, True),
    ("needlestick-seroconverted", {**WORK, "special_case": "needlestick", "case_type": "other_illness"},
     True, J, M6, True),
    ("needlestick-days-away", {**WORK, "special_case": "needlestick", "days_away": 2}, True, H, M1, True),
    # 1904.9 medical removal: days away or restricted, never column J; chemical exposure = poisoning.
    ("medical-removal", {**WORK, "special_case": "medical_removal", "case_type": "poisoning"},
     True, I, M4, False),
    ("medical-removal-with-treatment", {**WORK, "special_case": "medical_removal", "medical_treatment": True,
                                        "case_type": "poisoning"}, True, I, M4, False),
    ("medical-removal-days-away", {**WORK, "special_case": "medical_removal", "days_away": 10,
                                   "case_type": "poisoning"}, True, H, M4, False),
    ("medical-removal-death", {**WORK, "special_case": "medical_removal", "died": True,
                               "case_type": "poisoning"}, True, G, M4, False),
    # 1904.10 hearing loss: the hearing-loss column M5 whatever else was answered.
    ("hearing-loss", {**WORK, "special_case": "hearing_loss"}, True, J, M5, False),
    ("hearing-loss-over-case-type", {**WORK, "special_case": "hearing_loss", "case_type": "injury"},
     True, J, M5, False),
    ("hearing-loss-restricted", {**WORK, "special_case": "hearing_loss", "days_restricted": 3},
     True, I, M5, False),
    # 1904.11 tuberculosis: the respiratory column M3, and a privacy case (1904.29(b)(7)(iv)).
    ("tuberculosis", {**WORK, "special_case": "tuberculosis"}, True, J, M3, True),
    ("tuberculosis-over-case-type", {**WORK, "special_case": "tuberculosis", "case_type": "other_illness"},
     True, J, M3, True),
    # Column M follows the answer for every type.
    ("type-M1", {**WORK, "medical_treatment": True, "case_type": "injury"}, True, J, M1, False),
    ("type-M2", {**WORK, "medical_treatment": True, "case_type": "skin_disorder"}, True, J, M2, False),
    ("type-M3", {**WORK, "medical_treatment": True, "case_type": "respiratory_condition"},
     True, J, M3, False),
    ("type-M4", {**WORK, "medical_treatment": True, "case_type": "poisoning"}, True, J, M4, False),
    ("type-M5", {**WORK, "medical_treatment": True, "case_type": "hearing_loss"}, True, J, M5, False),
    ("type-M6", {**WORK, "medical_treatment": True, "case_type": "other_illness"}, True, J, M6, False),
    # Privacy at the employee's request (1904.29(b)(7)(vi)).
    ("privacy-requested", {**WORK, "medical_treatment": True, "case_type": "other_illness",
                           "privacy_case": True}, True, J, M6, True),
    # Covered employees only: own employees and supervised temporary workers (1904.31).
    ("employee", {**WORK, "employment_type": "employee", "died": True}, True, G, None, False),
    ("temporary-worker", {**WORK, "employment_type": "temporary_worker", "days_away": 2},
     True, H, None, False),
    ("contractor", {**WORK, "employment_type": "contractor", "died": True}, False, None, None, False),
    ("visitor", {**WORK, "employment_type": "visitor", "days_away": 5, "medical_treatment": True},
     False, None, None, False),
    ("contractor-needlestick", {**WORK, "employment_type": "contractor", "special_case": "needlestick"},
     False, None, M1, True),
    # Work-related (1904.5) and a new case (1904.6): False and undetermined (None) both refuse.
    ("not-work-related", {"work_related": False, "new_case": True, "died": True}, False, None, None, False),
    ("work-related-undetermined", {"work_related": None, "new_case": True, "days_away": 4},
     False, None, None, False),
    ("not-new-case", {"work_related": True, "new_case": False, "medical_treatment": True},
     False, None, None, False),
    ("new-case-undetermined", {"work_related": True, "new_case": None, "restricted_or_transfer": True},
     False, None, None, False),
    ("neither-determined", {"special_case": "tuberculosis"}, False, None, M3, True),
    ("not-work-related-special", {"work_related": False, "new_case": True, "special_case": "hearing_loss"},
     False, None, M5, False),
]


@pytest.mark.parametrize(("answers", "recordable", "outcome", "case_type", "privacy"),
                         [row[1:] for row in TABLE], ids=[row[0] for row in TABLE])
def test_classify(answers: dict[str, Any], recordable: bool, outcome: Outcome | None,
                  case_type: CaseType | None, privacy: bool) -> None:
    result = classify(Answers(**answers))
    assert result.recordable is recordable
    assert result.outcome == outcome
    assert result.case_type == case_type
    assert result.privacy is privacy
    assert result.reasons and all(isinstance(reason, str) and reason for reason in result.reasons)


def test_classify_is_pure() -> None:
    answers = Answers(work_related=True, new_case=True, days_away=3, special_case="needlestick")
    before = dataclasses.asdict(answers)
    assert classify(answers) == classify(answers)
    assert dataclasses.asdict(answers) == before
    with pytest.raises(dataclasses.FrozenInstanceError):
        answers.died = True  # type: ignore[misc]


def test_special_case_none_and_missing_are_the_same() -> None:
    assert classify(Answers(**WORK, special_case=None)) == classify(Answers(**WORK))  # type: ignore[arg-type]


@pytest.mark.parametrize(("peak", "code"), [
    (None, None), (0, 1), (1, 1), (19, 1), (20, 21), (99, 21), (100, 22), (249, 22), (250, 3), (100_000, 3),
])
def test_size_code(peak: int | None, code: int | None) -> None:
    assert size_code(peak) == code


# --- the explanations: each rule with its paragraph and plain sentence --------------------------

# (id, answers, part of the explanation, rule, paragraph of 29 CFR 1904, the sentence's start)
RULE_TABLE: list[tuple[str, dict[str, Any], str, str, str, str]] = [
    ("not-covered", {**WORK, "employment_type": "contractor", "died": True}, "recordable", "not_covered",
     "1904.31(a)", "Not recordable here: not an employee covered by the rule"),
    ("work-related-undecided", {"new_case": True, "days_away": 3}, "recordable", "work_related_undecided",
     "1904.5(a)", "Not recordable yet: whether it is work-related is not decided"),
    ("not-work-related", {"work_related": False, "new_case": True, "days_away": 3}, "recordable",
     "not_work_related", "1904.5(a)", "Not recordable: not work-related"),
    ("new-case-undecided", {"work_related": True, "medical_treatment": True}, "recordable",
     "new_case_undecided", "1904.6(a)", "Not recordable yet: whether it is a new case is not decided"),
    ("not-new-case", {"work_related": True, "new_case": False, "medical_treatment": True}, "recordable",
     "not_new_case", "1904.6(a)", "Not recordable: not a new case"),
    ("first-aid-only", {**WORK}, "recordable", "no_criterion", "1904.7(a)",
     "Not recordable: no recording criterion met"),
    ("death", {**WORK, "died": True}, "recordable", "death", "1904.7(b)(2)", "Recordable: death"),
    ("days-away", {**WORK, "days_away": 2}, "recordable", "days_away", "1904.7(b)(3)",
     "Recordable: days away from work"),
    ("restricted", {**WORK, "restricted_or_transfer": True}, "recordable", "restricted", "1904.7(b)(4)",
     "Recordable: restricted work or job transfer"),
    ("medical-treatment", {**WORK, "medical_treatment": True}, "recordable", "medical_treatment",
     "1904.7(b)(5)", "Recordable: medical treatment beyond first aid"),
    ("loss-of-consciousness", {**WORK, "loss_of_consciousness": True}, "recordable", "loss_of_consciousness",
     "1904.7(b)(6)", "Recordable: loss of consciousness"),
    ("significant-diagnosis", {**WORK, "significant_diagnosis": True}, "recordable", "significant_diagnosis",
     "1904.7(b)(7)", "Recordable: significant injury or illness diagnosed"),
    ("needlestick", {**WORK, "special_case": "needlestick"}, "recordable", "needlestick", "1904.8(a)",
     "Recordable: needlestick"),
    ("medical-removal", {**WORK, "special_case": "medical_removal"}, "recordable", "medical_removal",
     "1904.9(a)", "Recordable: medical removal"),
    ("hearing-loss", {**WORK, "special_case": "hearing_loss"}, "recordable", "hearing_loss", "1904.10(a)",
     "Recordable: standard threshold shift"),
    ("tuberculosis", {**WORK, "special_case": "tuberculosis"}, "recordable", "tuberculosis", "1904.11(a)",
     "Recordable: tuberculosis"),
    ("outcome-G", {**WORK, "died": True, "days_away": 3}, "outcome", "outcome_death", "1904.7(b)(2)",
     "Column G"),
    ("outcome-H", {**WORK, "days_away": 3, "days_restricted": 2}, "outcome", "outcome_days_away",
     "1904.7(b)(3)", "Column H"),
    ("outcome-I", {**WORK, "days_restricted": 2, "medical_treatment": True}, "outcome", "outcome_restricted",
     "1904.7(b)(4)", "Column I"),
    ("outcome-I-medical-removal", {**WORK, "special_case": "medical_removal", "medical_treatment": True},
     "outcome", "outcome_medical_removal", "1904.9(b)", "Column I: a medical removal"),
    ("outcome-J", {**WORK, "loss_of_consciousness": True}, "outcome", "outcome_other", "1904.7(b)(5)-(7)",
     "Column J"),
    ("type-M5-hearing-loss", {**WORK, "special_case": "hearing_loss", "case_type": "injury"}, "caseType",
     "type_hearing_loss", "1904.10(a)", "Column M5: hearing loss"),
    ("type-M3-tuberculosis", {**WORK, "special_case": "tuberculosis"}, "caseType", "type_tuberculosis",
     "1904.11(a)", "Column M3"),
    ("type-M1-needlestick", {**WORK, "special_case": "needlestick"}, "caseType", "type_needlestick",
     "1904.8(a)", "Column M1"),
    ("type-answered", {**WORK, "medical_treatment": True, "case_type": "skin_disorder"}, "caseType",
     "type_answered", "1904.46", "Column M as answered"),
    ("type-missing", {**WORK, "medical_treatment": True}, "caseType", "type_missing", "1904.46",
     "Column M not answered yet"),
]


@pytest.mark.parametrize(("answers", "part", "rule", "paragraph", "sentence"),
                         [row[1:] for row in RULE_TABLE], ids=[row[0] for row in RULE_TABLE])
def test_each_rule_yields_its_paragraph_and_sentence(answers: dict[str, Any], part: str, rule: str,
                                                     paragraph: str, sentence: str) -> None:
    explained = classify(Answers(**answers)).explanation.json()[part]
    (found,) = [item for item in explained if item["rule"] == rule]
    assert found["paragraph"] == paragraph
    assert found["text"].startswith(sentence)
    assert found["text"].endswith(f" \u2014 {paragraph}")  # "Recordable: days away from work — 1904.7(b)(3)"


def test_every_rule_is_in_the_table() -> None:
    assert {row[3] for row in RULE_TABLE} == set(RULES)
    for rule in RULES.values():
        assert rule.paragraph.startswith("1904.") and rule.sentence


def test_each_criterion_met_is_listed_and_only_those() -> None:
    result = classify(Answers(**WORK, days_away=3, medical_treatment=True, special_case="needlestick"))
    assert [rule.key for rule in result.explanation.recordable] == ["days_away", "medical_treatment",
                                                                    "needlestick"]
    assert result.explanation.recordable[0].text == "Recordable: days away from work \u2014 1904.7(b)(3)"


@pytest.mark.parametrize(("answers", "missing"), [
    ({}, [("workRelated",), ("newCase",)]),
    ({"work_related": True, "medical_treatment": True}, [("newCase",)]),
    ({**WORK, "medical_treatment": True}, [("caseType",)]),
    ({**WORK, "days_away_from_work": True, "case_type": "injury"}, [("daysAway",)]),
    ({**WORK, "restricted_or_transfer": True, "case_type": "injury"}, [("daysRestricted",)]),
    ({**WORK, "days_away": 3, "case_type": "injury"}, []),
    # A contractor is not recorded here whatever else is answered: nothing is missing.
    ({"employment_type": "contractor"}, []),
])
def test_what_is_still_missing_to_decide(answers: dict[str, Any], missing: list[tuple[str, ...]]) -> None:
    assert [hint.fields for hint in classify(Answers(**answers)).explanation.missing] == missing


@pytest.mark.parametrize(("answers", "changes"), [
    ({"employment_type": "visitor", **WORK, "died": True}, {("employmentType",)}),
    ({"work_related": False, "new_case": True, "died": True}, {("workRelated",)}),
    ({"work_related": True, "new_case": False, "died": True}, {("newCase",)}),
    ({**WORK}, {("daysAwayFromWork", "restrictedOrTransfer", "medicalTreatment", "lossOfConsciousness",
                 "significantDiagnosis", "specialCase")}),
    ({**WORK, "died": True}, {("workRelated",), ("newCase",)}),
    ({**WORK, "days_away": 1}, {("workRelated",), ("newCase",), ("died",)}),
    ({**WORK, "days_restricted": 1}, {("workRelated",), ("newCase",), ("died",),
                                      ("daysAwayFromWork", "daysAway")}),
    ({**WORK, "medical_treatment": True}, {("workRelated",), ("newCase",), ("died",),
                                           ("daysAwayFromWork", "daysAway"),
                                           ("restrictedOrTransfer", "daysRestricted")}),
])
def test_what_would_change_the_decision(answers: dict[str, Any], changes: set[tuple[str, ...]]) -> None:
    """Each hint names the answers to change; applying it really changes the decision."""
    result = classify(Answers(**answers))
    assert {hint.fields for hint in result.explanation.would_change} == changes
    for hint in result.explanation.would_change:
        changed = classify(dataclasses.replace(Answers(**answers), **CHANGE[hint.fields[0]](answers)))
        assert (changed.recordable, changed.outcome) != (result.recordable, result.outcome), hint.fields


# The change each hint's first field stands for.
CHANGE: dict[str, Any] = {
    "employmentType": lambda a: {"employment_type": "employee"},
    "workRelated": lambda a: {"work_related": not a.get("work_related")},
    "newCase": lambda a: {"new_case": not a.get("new_case")},
    "died": lambda a: {"died": True},
    "daysAwayFromWork": lambda a: {"days_away_from_work": True, "days_away": 1},
    "restrictedOrTransfer": lambda a: {"restricted_or_transfer": True},
}
