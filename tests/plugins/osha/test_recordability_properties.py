"""Properties of the recordability function over every combination of answers."""

from __future__ import annotations

from dataclasses import replace

from hypothesis import given, settings
from hypothesis import strategies as st

from ehs_plugins.osha.recordability import (
    COVERED,
    Answers,
    CaseType,
    EmploymentType,
    Outcome,
    SpecialCase,
    classify,
)

answers = st.builds(
    Answers,
    employment_type=st.sampled_from(list(EmploymentType)),
    work_related=st.sampled_from([True, False, None]),
    new_case=st.sampled_from([True, False, None]),
    died=st.booleans(),
    days_away_from_work=st.booleans(),
    days_away=st.integers(0, 180),
    restricted_or_transfer=st.booleans(),
    days_restricted=st.integers(0, 180),
    medical_treatment=st.booleans(),
    loss_of_consciousness=st.booleans(),
    significant_diagnosis=st.booleans(),
    special_case=st.sampled_from(list(SpecialCase)),
    case_type=st.sampled_from([None, *CaseType]),
    privacy_case=st.booleans(),
)
SEVERITY = [Outcome.other_recordable, Outcome.restricted, Outcome.days_away, Outcome.death]


@settings(max_examples=400, derandomize=True)
@given(answers)
def test_an_outcome_exactly_when_recordable_and_only_for_covered_work_related_new_cases(a):
    result = classify(a)
    assert (result.outcome is not None) == result.recordable
    if result.recordable:
        assert a.employment_type in COVERED and a.work_related is True and a.new_case is True


@settings(max_examples=400, derandomize=True)
@given(answers)
def test_the_most_serious_outcome_wins_and_more_harm_never_lowers_it(a):
    result = classify(a)
    if not result.recordable:
        return
    if a.died:
        assert result.outcome is Outcome.death
    worse = classify(replace(a, died=True))
    assert SEVERITY.index(worse.outcome) >= SEVERITY.index(result.outcome)
    away = classify(replace(a, days_away_from_work=True, days_away=max(a.days_away, 1)))
    assert SEVERITY.index(away.outcome) >= SEVERITY.index(result.outcome)


@settings(max_examples=400, derandomize=True)
@given(answers)
def test_special_cases_keep_their_rules(a):
    result = classify(a)
    if a.special_case == SpecialCase.medical_removal and result.recordable:
        assert result.outcome is not Outcome.other_recordable  # 1904.9(b)
    if a.special_case == SpecialCase.hearing_loss:
        assert result.case_type is CaseType.hearing_loss  # 1904.10: column M5
    if a.special_case == SpecialCase.tuberculosis:
        assert result.case_type is CaseType.respiratory_condition  # 1904.11: column M3
    if a.special_case in (SpecialCase.needlestick, SpecialCase.tuberculosis) or a.privacy_case:
        assert result.privacy  # 1904.29(b)(7)
    if a.special_case != SpecialCase.none and a.employment_type in COVERED \
            and a.work_related is True and a.new_case is True:
        assert result.recordable
