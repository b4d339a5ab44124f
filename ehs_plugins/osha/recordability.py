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
from typing import Any

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
class Rule:
    """One rule of Part 1904 as it applies to a case: the paragraph it comes
    from and what it means, in plain words."""

    key: str
    paragraph: str
    sentence: str

    @property
    def text(self) -> str:
        return f"{self.sentence} \u2014 {self.paragraph}"

    def json(self) -> dict[str, str]:
        return {"rule": self.key, "paragraph": self.paragraph, "text": self.text}


@dataclass(frozen=True)
class Hint:
    """An answer still missing to decide, or one that would change the decision."""

    fields: tuple[str, ...]
    paragraph: str
    sentence: str

    def json(self) -> dict[str, Any]:
        return {"fields": list(self.fields), "paragraph": self.paragraph,
                "text": f"{self.sentence} \u2014 {self.paragraph}"}


def _rules(*rules: Rule) -> dict[str, Rule]:
    return {rule.key: rule for rule in rules}


RULES = _rules(
    # Who and what is recorded at all: 1904.31, 1904.5, 1904.6, 1904.4.
    Rule("not_covered", "1904.31(a)",
         "Not recordable here: not an employee covered by the rule (their own employer records it)"),
    Rule("work_related_undecided", "1904.5(a)",
         "Not recordable yet: whether it is work-related is not decided"),
    Rule("not_work_related", "1904.5(a)", "Not recordable: not work-related"),
    Rule("new_case_undecided", "1904.6(a)", "Not recordable yet: whether it is a new case is not decided"),
    Rule("not_new_case", "1904.6(a)", "Not recordable: not a new case (a recurrence of a recorded case)"),
    Rule("no_criterion", "1904.7(a)",
         "Not recordable: no recording criterion met (first aid only, 1904.7(b)(5)(ii))"),
    # General recording criteria, 1904.7(b).
    Rule("death", "1904.7(b)(2)", "Recordable: death"),
    Rule("days_away", "1904.7(b)(3)", "Recordable: days away from work"),
    Rule("restricted", "1904.7(b)(4)", "Recordable: restricted work or job transfer"),
    Rule("medical_treatment", "1904.7(b)(5)", "Recordable: medical treatment beyond first aid"),
    Rule("loss_of_consciousness", "1904.7(b)(6)", "Recordable: loss of consciousness"),
    Rule("significant_diagnosis", "1904.7(b)(7)",
         "Recordable: significant injury or illness diagnosed by a physician or other licensed health care "
         "professional"),
    # Special recording criteria, 1904.8-1904.11.
    Rule("needlestick", "1904.8(a)",
         "Recordable: needlestick or cut from a sharp object contaminated with another person's blood "
         "or other potentially infectious material"),
    Rule("medical_removal", "1904.9(a)", "Recordable: medical removal under an OSHA standard"),
    Rule("hearing_loss", "1904.10(a)", "Recordable: standard threshold shift in hearing of 25 dB or more"),
    Rule("tuberculosis", "1904.11(a)",
         "Recordable: tuberculosis after exposure to active tuberculosis at work"),
    # The one outcome column, the most serious (G > H > I > J).
    Rule("outcome_death", "1904.7(b)(2)", "Column G: the case resulted in death"),
    Rule("outcome_days_away", "1904.7(b)(3)", "Column H: days away from work, the most serious outcome"),
    Rule("outcome_restricted", "1904.7(b)(4)",
         "Column I: restricted work or job transfer, the most serious outcome"),
    Rule("outcome_medical_removal", "1904.9(b)",
         "Column I: a medical removal is recorded as days away or restricted work, never as other "
         "recordable"),
    Rule("outcome_other", "1904.7(b)(5)-(7)",
         "Column J: other recordable case (no death, days away, restriction or transfer)"),
    # The type column M.
    Rule("type_hearing_loss", "1904.10(a)", "Column M5: hearing loss, whatever type was answered"),
    Rule("type_tuberculosis", "1904.11(a)",
         "Column M3: tuberculosis goes in the respiratory condition column, whatever type was answered"),
    Rule("type_needlestick", "1904.8(a)", "Column M1: a needlestick or sharps case is entered as an injury"),
    Rule("type_answered", "1904.46",
         "Column M as answered (an injury or the kind of illness, as 1904.46 defines)"),
    Rule("type_missing", "1904.46", "Column M not answered yet: injury or the kind of illness"),
)
CRITERIA_FIELDS = ("daysAwayFromWork", "restrictedOrTransfer", "medicalTreatment", "lossOfConsciousness",
                   "significantDiagnosis", "specialCase")


@dataclass(frozen=True)
class Explanation:
    """Why `classify` decided what it did: the rules that applied to
    recordable, outcome and case type; the answers still missing to decide;
    and the answers that would change the decision."""

    recordable: tuple[Rule, ...]
    outcome: tuple[Rule, ...]
    case_type: tuple[Rule, ...]
    missing: tuple[Hint, ...]
    would_change: tuple[Hint, ...]

    def json(self) -> dict[str, Any]:
        return {"recordable": [rule.json() for rule in self.recordable],
                "outcome": [rule.json() for rule in self.outcome],
                "caseType": [rule.json() for rule in self.case_type],
                "missing": [hint.json() for hint in self.missing],
                "wouldChange": [hint.json() for hint in self.would_change]}


@dataclass(frozen=True)
class Classification:
    recordable: bool
    outcome: Outcome | None
    case_type: CaseType | None
    privacy: bool
    explanation: Explanation

    @property
    def reasons(self) -> tuple[str, ...]:
        return tuple(rule.sentence for rule in self.explanation.recordable)


def _criteria(answers: Answers, special: SpecialCase) -> list[Rule]:
    """The recording criteria the answers meet (1904.7(b), 1904.8-1904.11)."""
    met = []
    if answers.died:
        met.append(RULES["death"])
    if answers.days_away_from_work or answers.days_away > 0:
        met.append(RULES["days_away"])
    if answers.restricted_or_transfer or answers.days_restricted > 0:
        met.append(RULES["restricted"])
    if answers.medical_treatment:
        met.append(RULES["medical_treatment"])
    if answers.loss_of_consciousness:
        met.append(RULES["loss_of_consciousness"])
    if answers.significant_diagnosis:
        met.append(RULES["significant_diagnosis"])
    if special is not SpecialCase.none:
        met.append(RULES[special.value])
    return met


def _outcome(answers: Answers, special: SpecialCase) -> tuple[Outcome, Rule]:
    """The single most serious outcome: G death > H days away > I restricted
    or transfer > J other recordable (Form 300 instructions, 1904.7(b))."""
    if answers.died:
        return Outcome.death, RULES["outcome_death"]
    if answers.days_away_from_work or answers.days_away > 0:
        return Outcome.days_away, RULES["outcome_days_away"]
    if answers.restricted_or_transfer or answers.days_restricted > 0:
        return Outcome.restricted, RULES["outcome_restricted"]
    if special is SpecialCase.medical_removal:  # 1904.9(b): never column J
        return Outcome.restricted, RULES["outcome_medical_removal"]
    return Outcome.other_recordable, RULES["outcome_other"]


def _would_change(answers: Answers, recordable: bool, outcome: Outcome | None) -> list[Hint]:
    if answers.employment_type not in COVERED:
        return [Hint(("employmentType",), "1904.31(b)(2)",
                     "Recordable here if the person is your employee or a temporary worker you supervise "
                     "day to day")]
    if answers.work_related is False:
        return [Hint(("workRelated",), "1904.5(a)",
                     "Recordable if an event or exposure at work caused or contributed to it")]
    if answers.new_case is False:
        return [Hint(("newCase",), "1904.6(a)",
                     "Recordable if it is a new case, not a recurrence of a recorded one")]
    hints = []
    if not recordable and answers.work_related and answers.new_case:
        hints.append(Hint(CRITERIA_FIELDS, "1904.7(a)",
                          "Recordable if a criterion follows: days away, restricted work or transfer, "
                          "medical treatment beyond first aid, loss of consciousness, a significant "
                          "diagnosis or a special case"))
    if recordable:
        hints.append(Hint(("workRelated",), "1904.5(b)(2)",
                          "Not recordable if it proves not work-related (an exception of 1904.5(b)(2))"))
        hints.append(Hint(("newCase",), "1904.6(a)",
                          "Not recordable if it proves a recurrence of a case already recorded"))
    if outcome in (Outcome.days_away, Outcome.restricted, Outcome.other_recordable):
        hints.append(Hint(("died",), "1904.7(b)(2)", "Column G if the employee dies of it"))
    if outcome in (Outcome.restricted, Outcome.other_recordable):
        hints.append(Hint(("daysAwayFromWork", "daysAway"), "1904.7(b)(3)",
                          "Column H if the employee misses a day of work after the day of injury"))
    if outcome is Outcome.other_recordable:
        hints.append(Hint(("restrictedOrTransfer", "daysRestricted"), "1904.7(b)(4)",
                          "Column I if work is restricted or the employee is transferred"))
    return hints


def _missing(answers: Answers, recordable: bool, case_type: CaseType | None) -> list[Hint]:
    missing = []
    if answers.employment_type in COVERED:
        if answers.work_related is None:
            missing.append(Hint(("workRelated",), "1904.5(a)",
                                "Decide whether an event or exposure at work caused or contributed to it"))
        if answers.new_case is None:
            missing.append(Hint(("newCase",), "1904.6(a)",
                                "Decide whether it is a new case or a recurrence of a recorded one"))
    if recordable and case_type is None:
        missing.append(Hint(("caseType",), "1904.46", "Choose column M: injury or the kind of illness"))
    if recordable and answers.days_away_from_work and answers.days_away == 0:
        missing.append(Hint(("daysAway",), "1904.7(b)(3)",
                            "Count the calendar days away from work (not the day of injury; at most 180)"))
    if recordable and answers.restricted_or_transfer and answers.days_restricted == 0:
        missing.append(Hint(("daysRestricted",), "1904.7(b)(4)",
                            "Count the calendar days of restriction or transfer (not the day of injury)"))
    return missing


def classify(answers: Answers) -> Classification:
    """Recordability (1904.4), 300 Log outcome (G-J), type column (M) and
    privacy, with the rules that decided each."""
    special = SpecialCase(answers.special_case or SpecialCase.none)
    privacy = answers.privacy_case or special in (SpecialCase.needlestick, SpecialCase.tuberculosis)
    case_type, type_rule = _case_type(answers, special)

    # 1904.4(a): covered (1904.31), work-related (1904.5), new (1904.6), and a criterion.
    blocking: list[Rule] = []
    if answers.employment_type not in COVERED:
        blocking.append(RULES["not_covered"])
    else:
        if answers.work_related is not True:
            blocking.append(RULES["not_work_related" if answers.work_related is False
                                  else "work_related_undecided"])
        if answers.new_case is not True:
            blocking.append(RULES["not_new_case" if answers.new_case is False else "new_case_undecided"])
    met = _criteria(answers, special)
    recordable = not blocking and bool(met)
    outcome, outcome_rules = None, ()
    if recordable:
        outcome, outcome_rule = _outcome(answers, special)
        outcome_rules = (outcome_rule,)
    explanation = Explanation(
        recordable=tuple(met) if recordable else tuple(blocking) or (RULES["no_criterion"],),
        outcome=outcome_rules, case_type=(type_rule,),
        missing=tuple(_missing(answers, recordable, case_type)),
        would_change=tuple(_would_change(answers, recordable, outcome)))
    return Classification(recordable, outcome, case_type, privacy, explanation)


def _case_type(answers: Answers, special: SpecialCase) -> tuple[CaseType | None, Rule]:
    if special is SpecialCase.hearing_loss:  # 1904.10(a)
        return CaseType.hearing_loss, RULES["type_hearing_loss"]
    if special is SpecialCase.tuberculosis:  # 1904.11(a)
        return CaseType.respiratory_condition, RULES["type_tuberculosis"]
    if answers.case_type:
        return CaseType(answers.case_type), RULES["type_answered"]
    if special is SpecialCase.needlestick:  # 1904.8(a): an injury (an illness once seroconverted)
        return CaseType.injury, RULES["type_needlestick"]
    return None, RULES["type_missing"]


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
