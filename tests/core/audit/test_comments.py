"""Comments on an incident: anyone who can see the incident may add and read
them (a reporter on their own report, an assignee); empty bodies are refused;
invisible incidents answer 404 exactly like missing ones; transition notes
are listed as comments too.

Spec: Comment, Incidents endpoints (comments), Errors."""

from __future__ import annotations

import datetime as dt

import pytest

from tests.core.audit.support import assign_action, new_site, report


@pytest.fixture
def site(admin) -> int:
    return new_site(admin)


@pytest.fixture
def reporter(make_user):
    return make_user("reporter")


@pytest.fixture
def supervisor(make_user):
    return make_user("supervisor")


@pytest.fixture
def outsider(make_user):
    return make_user("reporter")


@pytest.fixture
def number(reporter, site) -> int:
    return report(reporter, site)


def path(number: int) -> str:
    return f"/api/incidents/{number}/comments"


def comment(browser, number: int, body, status: int | str = 201):
    return browser.post_json(path(number), {"body": body}, status=status)


def me(browser) -> dict:
    return {"id": browser.user["id"], "name": browser.user["name"]}


def test_reporter_comments_on_their_own_incident(reporter, number):
    created = comment(reporter, number, "The spill is near door 3").json
    assert created["body"] == "The spill is near door 3"
    assert created["author"] == me(reporter)
    assert isinstance(created["id"], int)
    moment = dt.datetime.fromisoformat(created["createdAt"].replace("Z", "+00:00"))
    assert abs(dt.datetime.now(dt.UTC) - moment) < dt.timedelta(minutes=5)
    listed = reporter.get(path(number), status=200).json
    assert listed == [created]


def test_comments_are_listed_in_order_with_their_authors(reporter, supervisor, make_user, number):
    assignee = make_user("reporter")
    assign_action(supervisor, number, assignee.user["id"])
    comment(reporter, number, "first")
    comment(supervisor, number, "second")
    comment(assignee, number, "third")
    comment(reporter, number, "fourth")
    for browser in (reporter, supervisor, assignee):
        listed = browser.get(path(number), status=200).json
        assert [c["body"] for c in listed] == ["first", "second", "third", "fourth"]
        assert [c["author"] for c in listed] == [me(reporter), me(supervisor), me(assignee), me(reporter)]
        ids = [c["id"] for c in listed]
        assert ids == sorted(ids)


def test_comments_belong_to_their_incident(reporter, site, number):
    other = report(reporter, site, title="Second report")
    comment(reporter, number, "on the first")
    comment(reporter, other, "on the second")
    assert [c["body"] for c in reporter.get(path(number)).json] == ["on the first"]
    assert [c["body"] for c in reporter.get(path(other)).json] == ["on the second"]


def test_new_incident_has_no_comments(reporter, number):
    assert reporter.get(path(number), status=200).json == []


@pytest.mark.parametrize("body", ["", "   ", "\n\t"], ids=["empty", "spaces", "whitespace"])
def test_empty_body_is_400(reporter, number, body):
    response = comment(reporter, number, body, status=400)
    assert response.json["error"]
    assert [issue["path"] for issue in response.json["issues"]] == ["body"]
    assert reporter.get(path(number)).json == []


@pytest.mark.parametrize("payload", [{}, {"body": None}, {"body": 42}, {"text": "hi"}],
                         ids=["missing", "null", "number", "wrong-field"])
def test_invalid_payload_is_400(reporter, number, payload):
    response = reporter.post_json(path(number), payload, status=400)
    assert "body" in [issue["path"] for issue in response.json["issues"]]
    assert reporter.get(path(number)).json == []


def test_body_is_kept_verbatim_apart_from_surrounding_space(reporter, number):
    text = "<script>alert(1)</script> & \"quotes\" — ünïcode"
    created = comment(reporter, number, f"  {text}  ").json
    assert created["body"] == text
    assert reporter.get(path(number)).json[0]["body"] == text


def test_outsider_gets_404_like_a_missing_number(outsider, reporter, number):
    hidden_post = comment(outsider, number, "let me in", status=404)
    missing_post = comment(outsider, number + 1000, "let me in", status=404)
    assert hidden_post.json == missing_post.json
    hidden_get = outsider.get(path(number), status=404)
    missing_get = outsider.get(path(number + 1000), status=404)
    assert hidden_get.json == missing_get.json == hidden_post.json
    assert reporter.get(path(number)).json == []


def test_comments_need_a_session(client, reporter, number):
    client.post_json(path(number), {"body": "hello"}, status=401)
    client.get(path(number), status=401)
    assert reporter.get(path(number)).json == []


def test_comment_with_a_foreign_origin_is_refused(reporter, number):
    reporter.post_json(path(number), {"body": "hello"}, headers={"Origin": "https://evil.test"},
                       status=403)
    assert reporter.get(path(number)).json == []


def test_transition_note_is_listed_as_a_comment(supervisor, reporter, number):
    comment(reporter, number, "before triage")
    supervisor.post_json(f"/api/incidents/{number}/transitions", {"to": "triage", "note": "Triaging now"},
                         status=200)
    listed = reporter.get(path(number)).json
    assert [c["body"] for c in listed] == ["before triage", "Triaging now"]
    assert listed[1]["author"] == me(supervisor)
    assert listed[1]["transitionTo"] == "triage"
    assert listed[0]["transitionTo"] is None


def test_detail_says_the_reporter_may_comment(reporter, number):
    assert reporter.get(f"/api/incidents/{number}").json["can"]["comment"] is True
