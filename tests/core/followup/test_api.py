"""Follow-up without a name (issue #39 item 3), through the JSON API: the
code a report filed without a name gets (at least 128 bits, shown once,
kept only as a hash), the reporter's view and answer by code alone, the
team's messages on the incident (supervisor and above), who may see the
thread, and the refusals: wrong codes (404, then 429 per client address),
a report closed for more than 90 days, a role too low, an invisible
incident, an empty message, a report that has no follow-up."""

from __future__ import annotations

import datetime as dt
import hashlib
import logging
import re

import pytest
from sqlalchemy import select, text, update

from ehs_core.audit.models import AuditEntry
from ehs_core.followup.models import FollowUpCode, FollowUpMessage
from ehs_core.followup.services import WRONG_CODES
from ehs_core.incidents.models import Incident
from ehs_core.requestlog import loggable_path
from ehs_core.testing import file_report, mail_text

TEAM = "/api/incidents/{}/follow-up-messages"


def follow_up(code: str) -> str:
    return f"/api/follow-up/{code}"


@pytest.fixture
def anonymous(admin, site) -> dict:
    """An anonymous report filed by the admin: its JSON, with the code."""
    return file_report(admin, site, anonymous=True).json


@pytest.fixture
def code(anonymous) -> str:
    return anonymous["followUpCode"]


def close(dbsession, number: int, days_ago: float) -> None:
    dbsession.execute(update(Incident).where(Incident.number == number).values(
        status="closed", closed_at=dt.datetime.now(dt.UTC) - dt.timedelta(days=days_ago)))
    dbsession.flush()


# --- the code ------------------------------------------------------------------------------------


def test_an_anonymous_report_answers_with_a_code_of_at_least_128_bits_kept_only_as_its_hash(
        anonymous, code, dbsession):
    assert anonymous["anonymous"] is True and anonymous["reference"] == "INC-0001"
    # token_urlsafe(24): 32 characters of 6 bits each.
    assert re.fullmatch(r"[A-Za-z0-9_-]{32,}", code)
    assert len(code) * 6 >= 128
    rows = dbsession.execute(select(FollowUpCode)).scalars().all()
    assert [(row.incident_id, row.code_hash) for row in rows] == [
        (dbsession.execute(select(Incident.id).where(Incident.number == 1)).scalar(),
         hashlib.sha256(code.encode()).hexdigest())]
    # The code itself is in no column of the table.
    raw = dbsession.execute(text("SELECT * FROM follow_up_codes")).all()
    assert all(code not in str(value) for row in raw for value in row)


def test_a_named_report_gets_no_code(admin, site, dbsession):
    named = file_report(admin, site).json
    assert "followUpCode" not in named
    assert dbsession.execute(select(FollowUpCode)).first() is None


def test_each_report_gets_its_own_code_and_a_retry_gets_none(admin, site):
    client_id = "7d1c8a4e-8a43-4b1e-9a57-3f0d3c1f0a11"
    first = file_report(admin, site, anonymous=True, clientId=client_id)
    second = file_report(admin, site, anonymous=True).json
    assert first.json["followUpCode"] != second["followUpCode"]
    again = file_report(admin, site, status=200, anonymous=True, clientId=client_id)
    assert "followUpCode" not in again.json  # shown once: it is not kept to show again


# --- the thread ----------------------------------------------------------------------------------


def test_the_reporter_reads_the_teams_question_and_answers_it_with_the_code_alone(
        anonymous, code, client, supervisor, make_user, dbsession, inbox):
    manager = make_user("safety_manager", name="Sam Safety", email="sam@acme.test")
    view = client.get(follow_up(code), status=200).json
    assert view == {"reference": "INC-0001", "title": "Oil on the floor", "status": "reported",
                    "closedAt": None, "messages": []}

    asked = supervisor.post_json(TEAM.format(1), {"body": "Which door was it?\nThe north one?"},
                                 status=201).json
    assert asked["direction"] == "toReporter" and asked["author"]["id"] == supervisor.user["id"]

    messages = client.get(follow_up(code)).json["messages"]
    assert [(m["from"], m["body"]) for m in messages] == [("team", "Which door was it?\nThe north one?")]
    assert "author" not in messages[0]  # the team's names are not the reporter's to read

    inbox.clear()
    answered = client.post_json(follow_up(code) + "/messages", {"body": "Door 3, by the ramp"}, status=201)
    assert answered.json["from"] == "you"
    thread = supervisor.get(TEAM.format(1), status=200).json
    assert thread["ended"] is False
    assert [(m["direction"], m["body"], m["author"]) for m in thread["messages"]] == [
        ("toReporter", "Which door was it?\nThe north one?",
         {"id": supervisor.user["id"], "name": supervisor.user["name"]}),
        ("fromReporter", "Door 3, by the ramp", None)]
    manager.get(TEAM.format(1), status=200)  # safety managers too

    # The team hears of the answer: the supervisor who asked, and the safety
    # managers (the incident has no lead and its site no supervisor).
    mails = inbox.wait(2)
    assert sorted(m["To"] for m in mails) == sorted([supervisor.user["email"], "sam@acme.test"])
    assert "INC-0001" in mails[0]["Subject"] and "Door 3" not in mail_text(mails[0])

    # Nothing about the reporter is kept with their message.
    stored = dbsession.execute(select(FollowUpMessage).order_by(FollowUpMessage.id)).scalars().all()
    assert [(m.direction, m.author_id) for m in stored] == [("to_reporter", supervisor.user["id"]),
                                                          ("from_reporter", None)]
    columns = {c["name"] for c in dbsession.connection().dialect.get_columns(
        dbsession.connection(), "follow_up_messages")}
    assert columns == {"id", "incident_id", "direction", "body", "author_id", "created_at"}


def test_the_trail_records_each_message_for_the_team_only(anonymous, code, client, supervisor, reporter,
                                                          admin, dbsession):
    supervisor.post_json(TEAM.format(1), {"body": "Was anyone hurt?"}, status=201)
    client.post_json(follow_up(code) + "/messages", {"body": "No"}, status=201)
    entries = dbsession.execute(select(AuditEntry.action, AuditEntry.actor_id).where(
        AuditEntry.action.like("follow_up.%")).order_by(AuditEntry.id)).all()
    assert entries == [("follow_up.to_reporter", supervisor.user["id"]), ("follow_up.from_reporter", None)]
    actions = [e["action"] for e in supervisor.get("/api/incidents/1/timeline").json]
    assert "follow_up.to_reporter" in actions and "follow_up.from_reporter" in actions


def test_the_status_the_reporter_sees_follows_the_incident(anonymous, code, client, supervisor):
    supervisor.post_json("/api/incidents/1/transitions", {"to": "triage"}, status=200)
    assert client.get(follow_up(code)).json["status"] == "triage"


# --- refusals ------------------------------------------------------------------------------------


def test_a_wrong_code_is_404_and_too_many_from_one_address_are_429_even_for_the_right_code(
        anonymous, code, new_client):
    guesser = new_client()
    guesser.extra_environ["REMOTE_ADDR"] = "203.0.113.7"
    for n in range(WRONG_CODES.count):
        wrong = code[:-4] + f"{n:04d}"
        refused = guesser.get(follow_up(wrong), status=404)
        assert "No report has this follow-up code" in refused.json["error"]
    throttled = guesser.get(follow_up(code), status=429)
    assert int(throttled.headers["Retry-After"]) > 0
    guesser.post_json(follow_up(code) + "/messages", {"body": "hello"}, status=429)
    # Another address is not affected.
    other = new_client()
    other.extra_environ["REMOTE_ADDR"] = "198.51.100.4"
    other.get(follow_up(code), status=200)


def test_a_malformed_code_is_refused_like_a_wrong_one(client):
    assert client.get(follow_up("short"), status=404).json["error"].startswith("No report")
    client.post_json(follow_up("x" * 300) + "/messages", {"body": "hi"}, status=404)


def test_the_code_stops_working_when_the_incident_has_been_closed_for_90_days(
        anonymous, code, client, supervisor, dbsession):
    close(dbsession, 1, days_ago=89)
    assert client.get(follow_up(code), status=200).json["status"] == "closed"
    client.post_json(follow_up(code) + "/messages", {"body": "Thanks"}, status=201)
    close(dbsession, 1, days_ago=91)
    ended = client.get(follow_up(code), status=404).json
    assert "closed more than 90 days ago" in ended["error"]
    client.post_json(follow_up(code) + "/messages", {"body": "Hello?"}, status=404)
    assert supervisor.get(TEAM.format(1)).json["ended"] is True
    refused = supervisor.post_json(TEAM.format(1), {"body": "Still there?"}, status=409)
    assert "90 days" in refused.json["error"]
    # Reopened (the workflow clears closedAt): the code works again.
    dbsession.execute(update(Incident).where(Incident.number == 1).values(status="investigation",
                                                                          closed_at=None))
    assert client.get(follow_up(code), status=200).json["status"] == "investigation"


def test_an_ended_code_is_not_counted_as_a_guess(anonymous, code, new_client, dbsession):
    close(dbsession, 1, days_ago=120)
    browser = new_client()
    for _ in range(WRONG_CODES.count + 2):
        browser.get(follow_up(code), status=404)


def test_an_empty_message_is_refused_with_its_issue(anonymous, code, client, supervisor):
    for body in ({"body": ""}, {"body": "   \n "}, {}):
        refused = supervisor.post_json(TEAM.format(1), body, status=400).json
        assert refused["issues"][0]["path"] == "body"
        refused = client.post_json(follow_up(code) + "/messages", body, status=400).json
        assert refused["issues"][0]["path"] == "body"
    client.post_json(follow_up(code) + "/messages", {"body": "x" * 5001}, status=400)
    client.post_json(follow_up(code) + "/messages", {"body": "hi", "name": "Ann"}, status=400)
    assert supervisor.get(TEAM.format(1)).json["messages"] == []


def test_who_may_read_and_write_the_thread(anonymous, code, admin, supervisor, reporter, client, site):
    # A reporter who sees the incident (an action is assigned to them) may not read its thread.
    admin.post_json("/api/incidents/1/actions", {"title": "Fix the leak", "assigneeId": reporter.user["id"]},
                    status=201)
    reporter.get("/api/incidents/1", status=200)
    reporter.get(TEAM.format(1), status=403)
    reporter.post_json(TEAM.format(1), {"body": "Who are you?"}, status=403)
    # An incident the reporter cannot see: 404, as one that does not exist.
    file_report(admin, site, anonymous=True)
    reporter.get(TEAM.format(2), status=404)
    reporter.post_json(TEAM.format(2), {"body": "Hello"}, status=404)
    supervisor.post_json(TEAM.format(99), {"body": "Hello"}, status=404)
    # Not signed in.
    client.get(TEAM.format(1), status=401)
    client.post_json(TEAM.format(1), {"body": "Hello"}, status=401)
    admin.post_json(TEAM.format(1), {"body": "Admins too"}, status=201)


def test_a_report_with_a_named_reporter_has_no_thread(admin, site, supervisor):
    file_report(admin, site)
    assert "only a report filed without a name" in supervisor.post_json(
        TEAM.format(1), {"body": "Hi"}, status=409).json["error"]
    supervisor.get(TEAM.format(1), status=409)


def test_the_code_never_reaches_the_log(anonymous, code, client, reporter, caplog):
    caplog.set_level(logging.INFO)
    client.get(follow_up(code))
    client.get(f"/f/{code}")
    client.post_json(follow_up(code) + "/messages", {"body": "Door 3"})
    client.get(follow_up(code[:-1] + "A"), status=404)
    assert caplog.records
    assert code not in caplog.text and code[:-1] not in caplog.text


def test_log_lines_that_write_a_path_hide_the_code():
    assert loggable_path("/f/abcdef") == "/f/{secret}"
    assert loggable_path("/api/follow-up/abcdef/messages") == "/api/follow-up/{secret}/messages"
    assert loggable_path("/k/token") == "/k/{secret}"
    assert loggable_path("/api/incidents/3/follow-up-messages") == "/api/incidents/3/follow-up-messages"
