"""The 300A certification (29 CFR 1904.32(b)(3)): stored per site and year,
in the log's answer, refused in the user's words when wrong."""

from __future__ import annotations

from tests.plugins.osha import OSHA, YEAR, get_log, issue_paths


def test_certification_is_kept_per_site_and_year(manager, site):
    url = f"{OSHA}/sites/{site}/certification?year={YEAR}"
    assert manager.get(url).json == {"executiveName": None, "executiveTitle": None, "phone": None,
                                     "certifiedOn": None, "complete": False}
    body = {"executiveName": "Pat Boss", "executiveTitle": "Plant director", "phone": "+1 413 555 0100",
            "certifiedOn": "2026-01-20"}
    assert manager.put_json(url, body).json == {**body, "complete": True}
    assert get_log(manager, site).json["certification"] == {**body, "complete": True}
    # Another year is untouched.
    assert get_log(manager, site, YEAR - 1).json["certification"]["complete"] is False
    # A field left out is cleared.
    assert manager.put_json(url, {"executiveName": "Pat Boss"}).json["phone"] is None


def test_certification_refuses_a_bad_phone_and_a_future_date(manager, site):
    url = f"{OSHA}/sites/{site}/certification?year={YEAR}"
    response = manager.put_json(url, {"phone": "call me", "certifiedOn": "2999-01-01"}, status=400)
    assert issue_paths(response) == {"phone", "certifiedOn"}


def test_certification_needs_a_safety_manager(make_user, site):
    supervisor = make_user("supervisor")
    supervisor.put_json(f"{OSHA}/sites/{site}/certification?year={YEAR}", {"phone": "555 0100"},
                        status=403)
