"""Whether an injury or illness case is recordable, and how it is classified
on the OSHA 300 Log: a pure function of the case's answers (29 CFR 1904).

- 1904.4: recordable when work-related (1904.5), a new case (1904.6) and it
  meets a general criterion (1904.7) or a special case (1904.8-1904.11).
- Only employees covered by the rule count: the employer's own employees and
  temporary workers it supervises day to day (1904.31).
- 1904.7(b): death, days away, restricted work or transfer, medical treatment
  beyond first aid, loss of consciousness, significant diagnosed injury or
  illness.
- The 300 Log takes the single most serious outcome: G death > H days away >
  I restricted/transfer > J other recordable.
- Special cases: needlestick/sharps (1904.8: an injury and a privacy case),
  medical removal (1904.9: days away or restricted, never column J), hearing
  loss (1904.10: hearing-loss column M5), tuberculosis (1904.11:
  respiratory column M3, a privacy case, 1904.29(b)(7)(iv)).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

MAX_DAYS = 180  # 1904.7(b)(3)(vii): days away plus restricted days are capped


class EmploymentType(StrEnum):
    employee = "employee"
    temporary_worker = "temporary_worker"  # supervised day to day: covered (1904.31(b)(2))
    contractor = "contractor"  # recorded by the contractor, not here
    visitor = "visitor"


COVERED = (EmploymentType.employee, EmploymentType.temporary_worker)


class SpecialCase(StrEnum):
    none = "none"
    needlestick = "needlestick"
    medical_removal = "medical_removal"
    hearing_loss = "hearing_loss"
    tuberculosis = "tuberculosis"


class Outcome(StrEnum):
    death = "death"  # column G, ITA incident_outcome 1
    days_away = "days_away"  # column H, 2
    restricted = "restricted"  # column I, 3
    other_recordable = "other_recordable"  # column J, 4


class CaseType(StrEnum):
    injury = "injury"  # M1, ITA type_of_incident 1
    skin_disorder = "skin_disorder"  # M2, 2
    respiratory_condition = "respiratory_condition"  # M3, 3
    poisoning = "poisoning"  # M4, 4
    hearing_loss = "hearing_loss"  # M5, 5
    other_illness = "other_illness"  # M6, 6


OUTCOME_CODES = {Outcome.death: 1, Outcome.days_away: 2, Outcome.restricted: 3,
                 Outcome.other_recordable: 4}
CASE_TYPE_CODES = {CaseType.injury: 1, CaseType.skin_disorder: 2, CaseType.respiratory_condition: 3,
                   CaseType.poisoning: 4, CaseType.hearing_loss: 5, CaseType.other_illness: 6}


@dataclass(frozen=True)
class Answers:
    employment_type: str = EmploymentType.employee
    work_related: bool | None = None
    new_case: bool | None = None
    died: bool = False
    days_away_from_work: bool = False
    days_away: int = 0
    restricted_or_transfer: bool = False
    days_restricted: int = 0
    medical_treatment: bool = False
    loss_of_consciousness: bool = False
    significant_diagnosis: bool = False
    special_case: str = SpecialCase.none
    case_type: str | None = None
    privacy_case: bool = False


@dataclass(frozen=True)
class Classification:
    recordable: bool
    outcome: Outcome | None
    case_type: CaseType | None
    privacy: bool
    reasons: tuple[str, ...]


def classify(answers: Answers) -> Classification:
    """Recordability, 300 Log outcome (G-J), type column (M) and privacy."""
    special = SpecialCase(answers.special_case or SpecialCase.none)
    privacy = answers.privacy_case or special in (SpecialCase.needlestick, SpecialCase.tuberculosis)
    case_type = _case_type(answers, special)
    if answers.employment_type not in COVERED:
        return Classification(False, None, case_type, privacy, ("not an employee covered by the rule",))
    if answers.work_related is not True:
        return Classification(False, None, case_type, privacy, ("not (yet) determined work-related",))
    if answers.new_case is not True:
        return Classification(False, None, case_type, privacy, ("not (yet) determined a new case",))

    reasons: list[str] = []
    if answers.died:
        reasons.append("death")
    if answers.days_away_from_work or answers.days_away > 0:
        reasons.append("days away from work")
    if answers.restricted_or_transfer or answers.days_restricted > 0:
        reasons.append("restricted work or job transfer")
    if answers.medical_treatment:
        reasons.append("medical treatment beyond first aid")
    if answers.loss_of_consciousness:
        reasons.append("loss of consciousness")
    if answers.significant_diagnosis:
        reasons.append("significant diagnosed injury or illness")
    if special is not SpecialCase.none:
        reasons.append(f"special case: {special.value.replace('_', ' ')}")
    if not reasons:
        return Classification(False, None, case_type, privacy, ("no recording criterion met",))

    if answers.died:
        outcome = Outcome.death
    elif answers.days_away_from_work or answers.days_away > 0:
        outcome = Outcome.days_away
    elif answers.restricted_or_transfer or answers.days_restricted > 0 \
            or special is SpecialCase.medical_removal:
        # 1904.9(b): a medical removal is never an "other recordable" case.
        outcome = Outcome.restricted
    else:
        outcome = Outcome.other_recordable
    return Classification(True, outcome, case_type, privacy, tuple(reasons))


def _case_type(answers: Answers, special: SpecialCase) -> CaseType | None:
    if special is SpecialCase.hearing_loss:
        return CaseType.hearing_loss
    if special is SpecialCase.tuberculosis:
        return CaseType.respiratory_condition
    if answers.case_type:
        return CaseType(answers.case_type)
    if special is SpecialCase.needlestick:
        return CaseType.injury
    return None


def size_code(peak_employees: int | None) -> int | None:
    """ITA `size` from the most employees at any time in the year (since
    2023-10-17): 1 (<20), 21 (20-99), 22 (100-249), 3 (250+)."""
    if peak_employees is None:
        return None
    if peak_employees < 20:
        return 1
    if peak_employees < 100:
        return 21
    if peak_employees < 250:
        return 22
    return 3
