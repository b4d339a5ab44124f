"""Incident reports: filing, listing, detail and updates, CSV export, and
numbering and idempotency under concurrent requests.

The helpers below are shared by the modules of this package.
"""

from __future__ import annotations

from typing import Any

from ehs_core.testing import OCCURRED, new_area, new_site, report_body

__all__ = ["OCCURRED", "new_area", "new_site", "report_body"]

INCIDENTS = "/api/incidents"


def issue_paths(response: Any) -> set[str]:
    """The `path`s of a 400's issues (checking the error shape on the way)."""
    assert response.status_int == 400
    assert isinstance(response.json["error"], str) and response.json["error"]
    assert response.json["issues"]
    for issue in response.json["issues"]:
        assert set(issue) == {"path", "message"}
        assert isinstance(issue["message"], str) and issue["message"]
    return {issue["path"] for issue in response.json["issues"]}


def report(browser: Any, site_id: int, status: int | str = 201, **fields: Any) -> Any:
    """POST a report (defaults filled in) and return the response."""
    return browser.post_json(INCIDENTS, report_body(site_id, **fields), status=status)


def file_report(browser: Any, site_id: int, **fields: Any) -> dict:
    """File a new report and return its JSON."""
    return report(browser, site_id, **fields).json


def listing(browser: Any, query: str = "", status: int = 200) -> Any:
    return browser.get(f"{INCIDENTS}{query}", status=status)


def listed_numbers(browser: Any, query: str = "") -> list[int]:
    return [item["number"] for item in listing(browser, query).json["items"]]


def add_action(browser: Any, number: int, assignee_id: int | None, title: str = "Fix the leak") -> dict:
    return browser.post_json(f"{INCIDENTS}/{number}/actions",
                             {"title": title, "assigneeId": assignee_id}, status=201).json


def move(browser: Any, number: int, to: str) -> dict:
    return browser.post_json(f"{INCIDENTS}/{number}/transitions", {"to": to}, status=200).json


# Every (organization, word) whose kept count (migration 0013_search_word_counts)
# differs from a count of the incidents' words now (PostgreSQL).
WORD_COUNT_DRIFT = """
WITH truth AS (
  SELECT organization_id, w AS word, count(*) AS n
  FROM incidents, unnest(ehs_search_words(title, description, location_detail)) AS w
  WHERE number IS NOT NULL GROUP BY organization_id, w)
SELECT truth.word, truth.n, kept.incidents FROM truth
FULL JOIN incident_word_counts AS kept USING (organization_id, word)
WHERE coalesce(truth.n, 0) <> coalesce(kept.incidents, 0)
"""
