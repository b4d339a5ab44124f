"""`classify` is the one pure function that decides recordability (1904.4-1904.11),
the 300 Log outcome column (G death > H days away > I restricted/transfer >
J other recordable), the type column M and privacy; `size_code` maps the peak
headcount to the ITA size code. Both are tested as tables."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from ehs_plugins.osha.recordability import Answers, CaseType, Outcome, classify, size_code

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
