"""The ITA batch-upload files: GET /api/osha/ita/summary.csv (establishment +
300A, one row per active site) and GET /api/osha/ita/cases.csv (Form 300/301
case data, no names), in OSHA's formats exactly."""

from __future__ import annotations

import csv
import io
import re
from typing import Any

import pytest

from tests.plugins.osha import (
    ESTABLISHMENT,
    FORM_301,
    OSHA,
    WORK,
    YEAR,
    full_year,
    get_log,
    new_case,
    new_incident,
    new_site,
    put_hours,
    recorded,
)

# Copied verbatim from shared/reference/osha-recordkeeping.md, sections 1.1 and 1.2.
SUMMARY_HEADER = "establishment_name,ein,company_name,street_address,city,state,zip,naics_code,industry_description,size,establishment_type,year_filing_for,annual_average_employees,total_hours_worked,no_injuries_illnesses,total_deaths,total_dafw_cases,total_djtr_cases,total_other_cases,total_dafw_days,total_djtr_days,total_injuries,total_skin_disorders,total_respiratory_conditions,total_poisonings,total_hearing_loss,total_other_illnesses,change_reason"  # noqa: E501
CASES_HEADER = "establishment_name,year_of_filing,case_number,job_title,date_of_incident,incident_location,incident_description,incident_outcome,dafw_num_away,djtr_num_tr,type_of_incident,date_of_birth,date_of_hire,sex,treatment_facility_type,treatment_in_patient,time_started_work,time_of_incident,time_unknown,nar_before_incident,nar_what_happened,nar_injury_illness,nar_object_substance,date_of_death"  # noqa: E501

SUMMARY_NUMBERS = ("size", "establishment_type", "year_filing_for", "annual_average_employees",
                   "total_hours_worked", "no_injuries_illnesses", "total_deaths", "total_dafw_cases",
                   "total_djtr_cases", "total_other_cases", "total_dafw_days", "total_djtr_days",
                   "total_injuries", "total_skin_disorders", "total_respiratory_conditions",
                   "total_poisonings", "total_hearing_loss", "total_other_illnesses")
CASE_NUMBERS = ("year_of_filing", "incident_outcome", "dafw_num_away", "djtr_num_tr", "type_of_incident",
                "treatment_facility_type", "treatment_in_patient", "time_unknown")
DATE = re.compile(r"\d{2}/\d{2}/\d{4}")


def download(browser: Any, name: str, year: int = YEAR) -> str:
    response = browser.get(f"{OSHA}/ita/{name}.csv", {"year": year}, status=200)
    assert response.content_type == "text/csv"
    return response.text


def rows_of(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text, newline="")))


def first_line(text: str) -> str:
    return text.split("\r\n", 1)[0]


def summary(browser: Any, year: int = YEAR) -> dict[str, dict[str, str]]:
    return {row["establishment_name"]: row for row in rows_of(download(browser, "summary", year))}


# --- summary.csv ----------------------------------------------------------------


def test_summary_header_equals_oshas_template(manager: Any, site: int) -> None:
    text = download(manager, "summary")
    assert first_line(text) == SUMMARY_HEADER
    assert len(SUMMARY_HEADER.split(",")) == 28


def test_summary_row(manager: Any, site: int) -> None:
    entries = full_year(10_000.4, 95)  # 120,004.8 hours
    entries[11]["averageEmployees"] = 120.5  # mean 97.125 -> 98; peak 121 -> size 22
    put_hours(manager, site, entries)
    recorded(manager, site, daysAway=4)  # H, K 4, M1
    recorded(manager, site, restrictedOrTransfer=True, daysRestricted=3,
             caseType="skin_disorder")  # I, L 3, M2
    recorded(manager, site, specialCase="needlestick")  # J, M1
    recorded(manager, site, specialCase="hearing_loss", died=True, dateOfDeath="2025-03-10")  # G, M5
    recorded(manager, site)  # not recordable
    assert summary(manager)["Plant North"] == {
        "establishment_name": "Plant North", "ein": "012345678", "company_name": "Acme Works",
        "street_address": "1 Foundry Road", "city": "Springfield", "state": "MA", "zip": "01101",
        "naics_code": "336390", "industry_description": "Motor vehicle parts", "size": "22",
        "establishment_type": "1", "year_filing_for": "2025", "annual_average_employees": "98",
        "total_hours_worked": "120005", "no_injuries_illnesses": "1", "total_deaths": "1",
        "total_dafw_cases": "1", "total_djtr_cases": "1", "total_other_cases": "1", "total_dafw_days": "4",
        "total_djtr_days": "3", "total_injuries": "2", "total_skin_disorders": "1",
        "total_respiratory_conditions": "0", "total_poisonings": "0", "total_hearing_loss": "1",
        "total_other_illnesses": "0", "change_reason": "",
    }


def test_summary_totals_match_the_300a(manager: Any, site: int) -> None:
    put_hours(manager, site, full_year(10_000, 50))
    recorded(manager, site, daysAway=9, daysRestricted=2, caseType="poisoning")
    recorded(manager, site, specialCase="tuberculosis")
    recorded(manager, site, medicalTreatment=True, caseType="other_illness")
    totals = get_log(manager, site).json["totals"]
    row = summary(manager)["Plant North"]
    columns = dict(zip(("G", "H", "I", "J", "K", "L", "M1", "M2", "M3", "M4", "M5", "M6"),
                       SUMMARY_HEADER.split(",")[15:27], strict=True))
    assert {key: int(row[column]) for key, column in columns.items()} == totals


@pytest.mark.parametrize(("peak", "code"), [(19, "1"), (20, "21"), (99, "21"), (100, "22"), (249, "22"),
                                            (250, "3")])
def test_size_code_from_the_peak_monthly_headcount(manager: Any, site: int, peak: int, code: str) -> None:
    entries = full_year(1_000, 5)
    entries[6]["averageEmployees"] = peak
    put_hours(manager, site, entries)
    assert summary(manager)["Plant North"]["size"] == code


def test_no_injuries_illnesses_is_2_without_recordable_cases(manager: Any, site: int) -> None:
    put_hours(manager, site, full_year(10_000, 50))
    recorded(manager, site)  # first aid only
    recorded(manager, site, employmentType="contractor", daysAway=5)
    row = summary(manager)["Plant North"]
    assert row["no_injuries_illnesses"] == "2"
    assert {row[column] for column in SUMMARY_HEADER.split(",")[15:27]} == {"0"}
    recorded(manager, site, medicalTreatment=True)
    assert summary(manager)["Plant North"]["no_injuries_illnesses"] == "1"


def test_one_row_per_active_site(manager: Any, site: int) -> None:
    south = new_site(manager, "Plant South")
    closed = new_site(manager, "Old Mill")
    put_hours(manager, closed, full_year(5_000, 30))
    recorded(manager, closed, daysAway=3)
    manager.patch_json(f"/api/sites/{closed}", {"archived": True}, status=200)
    rows = rows_of(download(manager, "summary"))
    assert sorted(row["establishment_name"] for row in rows) == ["Plant North", "Plant South"]
    assert south and "Old Mill" not in download(manager, "summary")


def test_leading_zeros_are_kept(manager: Any, site: int) -> None:
    manager.patch_json(f"/api/sites/{site}", {"ein": "001234567", "zip": "021101234"}, status=200)
    text = download(manager, "summary")
    assert ",001234567," in text and ",021101234," in text
    row = summary(manager)["Plant North"]
    assert (row["ein"], row["zip"]) == ("001234567", "021101234")


def test_rfc_4180_quoting(manager: Any) -> None:
    name = 'Dock "B", East'
    site = new_site(manager, name)
    recorded(manager, site, daysAway=2, jobTitle='Loader, "night" shift')
    text = download(manager, "summary")
    assert '\r\n"Dock ""B"", East",012345678,' in text
    assert name in summary(manager)
    cases = download(manager, "cases")
    assert '"Dock ""B"", East"' in cases and '"Loader, ""night"" shift"' in cases
    (row,) = rows_of(cases)
    assert (row["establishment_name"], row["job_title"]) == (name, 'Loader, "night" shift')


def test_lines_end_with_crlf(manager: Any, site: int) -> None:
    recorded(manager, site, daysAway=2)
    for name in ("summary", "cases"):
        text = download(manager, name)
        assert text.endswith("\r\n")
        assert "\n" not in text.replace("\r\n", "")


def test_summary_numbers_are_whole(manager: Any, site: int) -> None:
    put_hours(manager, site, full_year(1_234.567, 12.34))
    recorded(manager, site, daysAway=2)
    rows = rows_of(download(manager, "summary"))
    for row in rows:
        for column in SUMMARY_NUMBERS:
            assert re.fullmatch(r"\d*", row[column]), (column, row[column])
    assert rows[0]["total_hours_worked"] == "14815"  # 14,814.804
    assert rows[0]["annual_average_employees"] == "13"


def test_summary_of_another_year_counts_only_that_year(manager: Any, site: int) -> None:
    recorded(manager, site, occurred_at="2024-05-05T10:00:00+00:00", daysAway=2)
    assert summary(manager, 2024)["Plant North"]["total_dafw_cases"] == "1"
    assert summary(manager, 2024)["Plant North"]["year_filing_for"] == "2024"
    assert summary(manager)["Plant North"]["total_dafw_cases"] == "0"


# --- cases.csv --------------------------------------------------------------------


def test_cases_header_equals_the_published_column_list(manager: Any, site: int) -> None:
    text = download(manager, "cases")
    assert first_line(text) == CASES_HEADER
    assert text == CASES_HEADER + "\r\n"  # no recordable case: the header alone
    assert len(CASES_HEADER.split(",")) == 24


def test_case_row(manager: Any, site: int) -> None:
    number = new_incident(manager, site, locationDetail="Press line 3")["number"]
    case = new_case(manager, number, "Jane Roe", **WORK, **FORM_301, daysAway=4, daysRestricted=6,
                    inpatientHospitalization=True)
    (row,) = rows_of(download(manager, "cases"))
    assert row == {
        "establishment_name": "Plant North", "year_of_filing": "2025", "case_number": case["caseNumber"],
        "job_title": "Press operator", "date_of_incident": "03/10/2025", "incident_location": "Press line 3",
        "incident_description": row["incident_description"], "incident_outcome": "2", "dafw_num_away": "4",
        "djtr_num_tr": "6", "type_of_incident": "1", "date_of_birth": "04/02/1980",
        "date_of_hire": "06/01/2015", "sex": "F", "treatment_facility_type": "1", "treatment_in_patient": "1",
        "time_started_work": "07:30", "time_of_incident": "09:00", "time_unknown": "0",
        "nar_before_incident": FORM_301["activityBefore"], "nar_what_happened": FORM_301["whatHappened"],
        "nar_injury_illness": row["nar_injury_illness"], "nar_object_substance": "Press ram",
        "date_of_death": "",
    }
    assert "Laceration" in row["nar_injury_illness"] and "Left index finger" in row["nar_injury_illness"]


def test_case_incident_description_is_the_300_log_column_f(manager: Any, site: int) -> None:
    """incident_description is the 300 Log's column F (injury or illness, body part, object or
    substance; reference [S4]), as the log shows it, not the incident's title."""
    recorded(manager, site, **FORM_301, daysAway=4)
    (row,) = rows_of(download(manager, "cases"))
    (log_row,) = get_log(manager, site).json["rows"]
    assert row["incident_description"] == log_row["description"]
    assert "Laceration" in row["incident_description"]


@pytest.mark.parametrize(("answers", "outcome", "case_type"), [
    ({"died": True, "dateOfDeath": "2025-03-10"}, "1", "1"),
    ({"daysAway": 3, "caseType": "skin_disorder"}, "2", "2"),
    ({"daysRestricted": 3, "caseType": "respiratory_condition"}, "3", "3"),
    ({"specialCase": "medical_removal", "caseType": "poisoning"}, "3", "4"),
    ({"specialCase": "hearing_loss"}, "4", "5"),
    ({"medicalTreatment": True, "caseType": "other_illness"}, "4", "6"),
    ({"specialCase": "tuberculosis"}, "4", "3"),
])
def test_case_codes(manager: Any, site: int, answers: dict, outcome: str, case_type: str) -> None:
    recorded(manager, site, **answers)
    (row,) = rows_of(download(manager, "cases"))
    assert (row["incident_outcome"], row["type_of_incident"]) == (outcome, case_type)


def test_case_yes_no_and_dates(manager: Any, site: int) -> None:
    recorded(manager, site, "Ann Able", died=True, dateOfDeath="2025-03-12", treatedInEmergencyRoom=False,
             inpatientHospitalization=False, dateOfBirth="1999-12-01", dateOfHire="2024-01-31", sex="m")
    (row,) = rows_of(download(manager, "cases"))
    assert (row["treatment_facility_type"], row["treatment_in_patient"]) == ("0", "0")
    assert (row["date_of_death"], row["date_of_birth"], row["date_of_hire"]) == \
        ("03/12/2025", "12/01/1999", "01/31/2024")
    assert row["sex"] == "M"
    assert row["incident_outcome"] == "1"


def test_cases_are_the_recordable_cases_of_the_year(manager: Any, site: int) -> None:
    south = new_site(manager, "Plant South")
    a = recorded(manager, site, "Ann Able", daysAway=1)
    b = recorded(manager, south, "Ben Baker", medicalTreatment=True)
    recorded(manager, site, "Cal Cole")  # not recordable
    recorded(manager, site, "Dee Dunn", occurred_at="2024-07-01T08:00:00+00:00", daysAway=1)
    rows = rows_of(download(manager, "cases"))
    assert sorted(row["case_number"] for row in rows) == sorted([a["caseNumber"], b["caseNumber"]])
    assert {row["establishment_name"] for row in rows} == {"Plant North", "Plant South"}


def test_case_numbers_are_whole_and_dates_mm_dd_yyyy(manager: Any, site: int) -> None:
    recorded(manager, site, **FORM_301, daysAway=2, daysRestricted=1, died=True, dateOfDeath="2025-03-11")
    recorded(manager, site, "Bo Brown", specialCase="needlestick")
    for row in rows_of(download(manager, "cases")):
        for column in CASE_NUMBERS:
            assert re.fullmatch(r"\d*", row[column]), (column, row[column])
        for column in ("date_of_incident", "date_of_birth", "date_of_hire", "date_of_death"):
            assert row[column] == "" or DATE.fullmatch(row[column]), (column, row[column])
        assert re.fullmatch(r"\d{2}:\d{2}", row["time_of_incident"])


def test_no_names_in_cases_csv(manager: Any, site: int) -> None:
    recorded(manager, site, "Jane Roe", **FORM_301, daysAway=4)
    recorded(manager, site, "Rick Private", specialCase="needlestick", physicianName="Dr. Who Knows",
             treatmentFacility="Saint Elsewhere Clinic", employeeAddress="9 Hidden Lane")
    recorded(manager, site, "Paula Quiet", medicalTreatment=True, caseType="other_illness", privacyCase=True)
    text = download(manager, "cases")
    assert len(rows_of(text)) == 3
    for secret in ("Jane Roe", "Rick Private", "Paula Quiet", FORM_301["employeeAddress"], "Dr. Ruth Hale",
                   "Mercy Hospital", "Dr. Who Knows", "Saint Elsewhere Clinic", "9 Hidden Lane"):
        assert secret not in text


def test_no_names_in_cases_csv_even_in_free_text(manager: Any, site: int) -> None:
    """1904.29(b)(10) and the ITA rules: names are stripped before the forms leave
    the employer, narratives hold no PII. The case's own name must not reach the
    file through the incident title or the narratives either."""
    number = new_incident(manager, site, title="Jane Roe cut her finger",
                          locationDetail="Jane Roe's press")["number"]
    new_case(manager, number, "Jane Roe", **WORK, **{
        **FORM_301, "whatHappened": "Jane Roe reached into the press",
        "activityBefore": "Jane Roe was loading blanks"}, daysAway=4)
    text = download(manager, "cases")
    assert len(rows_of(text)) == 1
    assert "Jane Roe" not in text


def test_archived_site_cases_stay_out_of_the_summary(manager: Any, site: int) -> None:
    closed = new_site(manager, "Old Mill")
    recorded(manager, closed, daysAway=3)
    manager.patch_json(f"/api/sites/{closed}", {"archived": True}, status=200)
    assert set(summary(manager)) == {"Plant North"}
    assert int(summary(manager)["Plant North"]["total_dafw_cases"]) == 0


def test_establishment_fields_of_a_bare_site_are_blank(manager: Any) -> None:
    new_site(manager, "Bare Yard", establishment=False)
    row = summary(manager)["Bare Yard"]
    for column in ("ein", "street_address", "city", "state", "zip", "naics_code", "industry_description",
                   "establishment_type", "size", "annual_average_employees", "total_hours_worked"):
        assert row[column] == "", column
    assert ESTABLISHMENT["ein"] not in download(manager, "summary")
