"""Filing with OSHA's ITA API from the service (1904.41), against a stand-in
server on loopback written from OSHA's published API description
(`ita_standin`), never the real service: a dry run and a real filing of a
site-year, OSHA's refusal shown with its field, and a filing again with the
reason of the change."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.plugins.osha import FORM_301, OSHA, YEAR, full_year, issue_paths, new_site, put_hours, recorded
from tests.plugins.osha.ita_standin import StandIn

TOKEN = "ita-token-0f3c9a"
FILINGS = f"{OSHA}/ita/submissions"


@pytest.fixture
def osha(registry: Any, monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, StandIn]]:
    """Two stand-ins, OSHA's preview environment and the real one, set as the service's ITA settings."""
    with StandIn(TOKEN) as preview, StandIn(TOKEN) as live:
        monkeypatch.setitem(registry.settings, "osha.ita_preview_url", preview.url)
        monkeypatch.setitem(registry.settings, "osha.ita_url", live.url)
        monkeypatch.setitem(registry.settings, "osha.ita_token", TOKEN)
        yield {"preview": preview, "live": live}


@pytest.fixture
def site_year(manager: Any, site: int) -> dict[str, Any]:
    """A year of a motor-vehicle-parts plant (NAICS 336390) of 120 people:
    the 300A and the case data are due (Appendix B); two cases."""
    put_hours(manager, site, full_year(20_000, 120))
    cases = [recorded(manager, site, "Jane Roe", daysAway=4, caseType="injury", **FORM_301),
             recorded(manager, site, "John Doe", restrictedOrTransfer=True, daysRestricted=3,
                      caseType="injury", **FORM_301)]
    return {"site": site, "cases": cases}


def file(manager: Any, registry: Any, status: int = 202, **body: Any) -> dict[str, Any]:
    started = manager.post_json(FILINGS, body, status=status).json
    if status != 202:
        return started
    assert started["status"] == "queued"
    registry["job_runner"].wait_idle(timeout=30)
    return manager.get(f"{FILINGS}/{started['id']}", status=200).json


def test_a_dry_run_goes_to_the_preview_environment(manager: Any, registry: Any, osha: dict,
                                                   site_year: dict) -> None:
    done = file(manager, registry, siteId=site_year["site"], year=YEAR)  # dryRun by default
    assert done["status"] == "accepted" and done["dryRun"] is True and done["errors"] == []
    preview, live = osha["preview"], osha["live"]
    assert done["confirmation"] in {s["confirmation_number"] for s in preview.submissions.values()}
    assert live.calls == []  # nothing reached the real service
    assert {call["authorization"] for call in preview.calls} == {f"Bearer {TOKEN}"}


def test_a_real_filing_sends_the_300a_and_the_case_data_without_names(manager: Any, registry: Any, osha: dict,
                                                                       site_year: dict) -> None:
    done = file(manager, registry, siteId=site_year["site"], year=YEAR, dryRun=False)
    assert done["status"] == "accepted" and done["withCaseData"] is True
    live = osha["live"]
    assert osha["preview"].calls == []
    [establishment] = live.establishments.values()
    assert establishment["establishment_name"] == "Plant North" and establishment["ein"] == "012345678"
    [form] = live.forms.values()
    assert (form["year_filing_for"], form["annual_average_employees"], form["total_dafw_cases"],
            form["total_djtr_cases"]) == (YEAR, 120, 1, 1)
    assert len(live.cases) == 2
    sent = str([call["body"] for call in live.calls])
    assert "Jane" not in sent and "Roe" not in sent and "Dr. Ruth Hale" not in sent  # 1904.41(b)
    [submission] = live.submissions.values()
    assert done["confirmation"] == submission["confirmation_number"]
    page = manager.get("/osha/submission", {"year": YEAR}, status=200).text
    assert submission["confirmation_number"] in page


def test_an_ita_refusal_is_shown_with_its_field(manager: Any, registry: Any, osha: dict, site: int) -> None:
    """OSHA's rule "the annual average number of employees must be greater than
    the number of cases" (a warning here) refuses the 300A: shown with its field."""
    put_hours(manager, site, full_year(500, 2))
    for name in ("Ann One", "Bob Two"):
        recorded(manager, site, name, medicalTreatment=True, caseType="injury", **FORM_301)
    done = file(manager, registry, siteId=site, year=YEAR, dryRun=False)
    assert done["status"] == "refused" and done["confirmation"] is None
    assert [error["field"] for error in done["errors"]] == ["annual_average_employees"]
    assert osha["live"].submissions == {}
    page = manager.get("/osha/submission", {"year": YEAR}, status=200).text
    assert "annual_average_employees" in page and "must be greater than the number of cases" in page


def test_filing_a_year_again_asks_for_the_reason(manager: Any, registry: Any, osha: dict,
                                                 site_year: dict) -> None:
    site = site_year["site"]
    first = file(manager, registry, siteId=site, year=YEAR, dryRun=False)
    assert first["status"] == "accepted"
    refused = file(manager, registry, status=400, siteId=site, year=YEAR, dryRun=False)
    assert issue_paths_of(refused) == {"changeReason"}
    again = file(manager, registry, siteId=site, year=YEAR, dryRun=False,
                 changeReason="A late days-away case was added")
    assert again["status"] == "accepted" and again["changeReason"] == "A late days-away case was added"
    live = osha["live"]
    assert len(live.establishments) == 1  # found again by its name, not created twice
    second = max(live.submissions.values(), key=lambda s: s["id"])
    assert second["change_reason"] == "A late days-away case was added"
    assert again["confirmation"] == second["confirmation_number"] != first["confirmation"]


def issue_paths_of(body: dict[str, Any]) -> set[str]:
    return {issue["path"] for issue in body["issues"]}


def test_the_edit_checks_run_first_and_name_each_failure(manager: Any, registry: Any, osha: dict) -> None:
    bare = new_site(manager, "Plant West", establishment=False)
    put_hours(manager, bare, full_year(20_000, 120))
    response = manager.post_json(FILINGS, {"siteId": bare, "year": YEAR}, status=400)
    assert {"ein", "streetAddress", "naicsCode"} <= issue_paths(response)
    assert osha["preview"].calls == [] and osha["live"].calls == []


def test_a_wrong_token_is_reported(manager: Any, registry: Any, osha: dict, site_year: dict,
                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(registry.settings, "osha.ita_token", "not-the-token")
    done = file(manager, registry, siteId=site_year["site"], year=YEAR)
    assert done["status"] == "refused" and "token" in done["errors"][0]["message"]


def test_no_token_no_filing(manager: Any, registry: Any, site_year: dict,
                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(registry.settings, "osha.ita_token", "")
    manager.post_json(FILINGS, {"siteId": site_year["site"], "year": YEAR}, status=409)


def test_filing_is_for_safety_managers(make_user: Any, site: int) -> None:
    make_user("supervisor").post_json(FILINGS, {"siteId": site, "year": YEAR}, status=403)


def test_the_submission_page_files_and_shows_the_answer(manager: Any, registry: Any, osha: dict,
                                                        site_year: dict) -> None:
    page = manager.get("/osha/submission", {"year": YEAR}, status=200)
    form = {"siteId": str(site_year["site"]), "year": str(YEAR), "mode": "dry", "changeReason": ""}
    assert "File with OSHA" in page.text
    manager.post("/osha/submission/file", form, status=302)
    registry["job_runner"].wait_idle(timeout=30)
    shown = manager.get("/osha/submission", {"year": YEAR}, status=200).text
    [submission] = osha["preview"].submissions.values()
    assert "accepted by OSHA" in shown and submission["confirmation_number"] in shown


def test_the_submission_page_names_the_failed_checks(manager: Any, registry: Any, osha: dict) -> None:
    bare = new_site(manager, "Plant West", establishment=False)
    form = {"siteId": str(bare), "year": str(YEAR), "mode": "real"}
    refused = manager.post("/osha/submission/file", form, status=400).text
    assert "Not filed" in refused and "ein" in refused
    assert osha["live"].calls == []


def test_an_accepted_real_filing_closes_the_filing_owed_and_a_dry_run_does_not(
        manager: Any, registry: Any, osha: dict, site_year: dict) -> None:
    """1904.41(c): the site-year's filing in the queue of what is owed is done
    once OSHA accepted the real filing, with its confirmation."""
    import datetime as dt

    from ehs_plugins.osha.obligations import keep_ita_filings

    def owed(status: str) -> list[dict]:
        return [item for item in manager.get("/api/obligations", {"status": status}).json["items"]
                if item["kind"] == "osha.ita_filing"]

    january = dt.datetime(YEAR + 1, 1, 10, 12, 0, tzinfo=dt.UTC)
    assert keep_ita_filings(registry, january) == 1
    file(manager, registry, siteId=site_year["site"], year=YEAR)  # a dry run
    assert len(owed("open")) == 1
    done = file(manager, registry, siteId=site_year["site"], year=YEAR, dryRun=False)
    assert owed("open") == []
    [closed] = owed("done")
    assert done["confirmation"] in closed["note"]
    assert keep_ita_filings(registry, january) == 0  # stays done


def test_a_filing_accepted_before_the_job_ran_is_done_when_it_opens(
        manager: Any, registry: Any, osha: dict, site_year: dict) -> None:
    import datetime as dt

    from ehs_plugins.osha.obligations import keep_ita_filings

    file(manager, registry, siteId=site_year["site"], year=YEAR, dryRun=False)
    assert keep_ita_filings(registry, dt.datetime(YEAR + 1, 1, 2, 12, 0, tzinfo=dt.UTC)) == 0
    [closed] = [item for item in manager.get("/api/obligations", {"status": "done"}).json["items"]
                if item["kind"] == "osha.ita_filing"]
    assert "confirmation" in closed["note"]
