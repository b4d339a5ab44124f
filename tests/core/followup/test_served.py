"""The follow-up as served (the application on its own database, not a
test's rolled-back transaction): on PostgreSQL a GET reads in autocommit,
and a wrong code's count must still be kept, so the limit holds against
guesses by GET (issue #39 item 3: wrong codes are rate-limited)."""

from __future__ import annotations

import pytest

from ehs_core.followup.services import WRONG_CODES
from ehs_core.testing import backends, postgres_database


@pytest.fixture(params=backends())
def live_database(request, tmp_path):
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path}/live.sqlite"
        return
    with postgres_database("live") as url:
        yield url


def test_wrong_codes_by_get_are_counted_and_answers_are_kept(live):
    admin = live.admin()
    site = admin.post_json("/api/sites", {"name": "Plant North"}).json["id"]
    code = admin.post_json("/api/incidents", {
        "title": "Oil on the floor", "type": "hazard", "severity": "low",
        "occurredAt": "2024-05-01T08:15:00+02:00", "siteId": site, "anonymous": True}).json["followUpCode"]
    guesser = live.client()
    guesser.extra_environ["REMOTE_ADDR"] = "203.0.113.50"
    for n in range(WRONG_CODES.count):
        guesser.get(f"/api/follow-up/{'Z' * 31}{n}", status=404)
    guesser.get(f"/f/{code}", status=429)
    guesser.get(f"/api/follow-up/{code}", status=429)
    reporter = live.client()
    reporter.extra_environ["REMOTE_ADDR"] = "198.51.100.50"
    reporter.post_json(f"/api/follow-up/{code}/messages", {"body": "Door 3"}, status=201)
    assert [m["body"] for m in reporter.get(f"/api/follow-up/{code}").json["messages"]] == ["Door 3"]
    thread = admin.get("/api/incidents/1/follow-up-messages").json["messages"]
    assert [(m["direction"], m["body"]) for m in thread] == [("fromReporter", "Door 3")]
