"""Saved views: /api/views lists the caller's own views plus shared ones
(optionally one page), creates views (sharing needs supervisor), and deletes
them (the owner or an admin; a view the caller cannot see answers 404).

Spec: Statistics and views; Saved view."""

from __future__ import annotations

from typing import Any

import pytest

from tests.plugins.analytics import VIEWS, assert_error, issue_paths


def create(browser: Any, name: str, page: str = "analytics", shared: bool = False, status: int = 201,
           **filters: Any) -> Any:
    body = {"page": page, "name": name, "filters": filters, "shared": shared}
    response = browser.post_json(VIEWS, body, status=status)
    return response.json if status == 201 else response


def names(browser: Any, page: str | None = None) -> set[str]:
    params = {"page": page} if page else {}
    return {view["name"] for view in browser.get(VIEWS, params=params, status=200).json}


def test_views_need_a_session(client):
    assert_error(client.get(VIEWS, status=401), 401)
    assert_error(client.post_json(VIEWS, {"page": "analytics", "name": "Mine"}, status=401), 401)
    assert_error(client.delete(f"{VIEWS}/1", status=401), 401)


def test_a_view_is_created_with_its_filters(make_user):
    reporter = make_user("reporter")
    filters = {"from": "2024-01-01", "to": "2024-03-31", "siteId": 3, "type": "hazard",
               "status": ["reported", "triage"]}
    created = reporter.post_json(VIEWS, {"page": "analytics", "name": "Q1 hazards", "filters": filters},
                                 status=201).json
    assert isinstance(created["id"], int)
    assert (created["page"], created["name"], created["filters"], created["shared"]) == (
        "analytics", "Q1 hazards", filters, False)
    listed = reporter.get(VIEWS, status=200).json
    assert [(v["id"], v["page"], v["name"], v["filters"], v["shared"]) for v in listed] == [
        (created["id"], "analytics", "Q1 hazards", filters, False)]


def test_filters_and_shared_may_be_left_out(make_user):
    reporter = make_user("reporter")
    bare = reporter.post_json(VIEWS, {"page": "incidents", "name": "Everything"}, status=201).json
    assert (bare["page"], bare["name"]) == ("incidents", "Everything")
    assert (bare["filters"], bare["shared"]) == ({}, False)
    assert [(v["name"], v["filters"]) for v in reporter.get(VIEWS, status=200).json] == [("Everything", {})]


def test_the_list_holds_own_views_and_shared_ones_by_page(make_user):
    supervisor = make_user("supervisor")
    colleague = make_user("supervisor")
    reporter = make_user("reporter")
    create(supervisor, "Supervisor's private", "analytics")
    create(supervisor, "Team dashboard", "analytics", shared=True)
    create(supervisor, "Open hazards", "incidents", shared=True, type="hazard")
    create(reporter, "My reports", "incidents")
    create(colleague, "Colleague's private", "incidents")

    assert names(reporter) == {"My reports", "Team dashboard", "Open hazards"}
    assert names(reporter, "incidents") == {"My reports", "Open hazards"}
    assert names(reporter, "analytics") == {"Team dashboard"}
    assert names(supervisor) == {"Supervisor's private", "Team dashboard", "Open hazards"}
    assert names(colleague, "incidents") == {"Colleague's private", "Open hazards"}
    shared = [v for v in reporter.get(VIEWS, params={"page": "incidents"}).json if v["shared"]]
    assert [(v["name"], v["filters"]) for v in shared] == [("Open hazards", {"type": "hazard"})]


def test_sharing_a_view_needs_the_supervisor_role(make_user):
    reporter = make_user("reporter")
    other = make_user("reporter")
    refused = create(reporter, "For everyone", shared=True, status=403)
    assert_error(refused, 403)
    assert names(reporter) == set()
    assert names(other) == set()
    for role in ("supervisor", "safety_manager", "admin"):
        assert create(make_user(role), f"Shared by {role}", shared=True)["shared"] is True
    assert names(other) == {"Shared by supervisor", "Shared by safety_manager", "Shared by admin"}


@pytest.mark.parametrize(("body", "path"), [
    ({"name": "No page"}, "page"),
    ({"page": "dashboard", "name": "Bad page"}, "page"),
    ({"page": "analytics"}, "name"),
    ({"page": "analytics", "name": ""}, "name"),
    ({"page": "analytics", "name": "x" * 201}, "name"),
    ({"page": "analytics", "name": "List", "filters": ["a"]}, "filters"),
    ({"page": "analytics", "name": "Text", "filters": "siteId=1"}, "filters"),
    ({"page": "analytics", "name": "Flag", "shared": "maybe"}, "shared"),
])
def test_invalid_views_answer_400(admin, body, path):
    assert path in issue_paths(admin.post_json(VIEWS, body, status=400))
    assert names(admin) == set()


def test_listing_an_unknown_page_answers_400(admin):
    assert "page" in issue_paths(admin.get(VIEWS, params={"page": "dashboard"}, status=400))


def test_the_owner_deletes_a_view(make_user):
    reporter = make_user("reporter")
    view = create(reporter, "Mine")
    kept = create(reporter, "Also mine", "incidents")
    reporter.delete(f"{VIEWS}/{view['id']}", status=204)
    assert names(reporter) == {"Also mine"}
    assert_error(reporter.delete(f"{VIEWS}/{view['id']}", status=404), 404)
    assert kept["id"] != view["id"]


def test_a_shared_view_is_deleted_by_its_owner_or_an_admin_only(admin, make_user):
    owner = make_user("supervisor")
    colleague = make_user("safety_manager")
    reporter = make_user("reporter")
    team = create(owner, "Team dashboard", shared=True)
    for other in (colleague, reporter):
        assert_error(other.delete(f"{VIEWS}/{team['id']}", status=403), 403)
    assert names(reporter) == {"Team dashboard"}
    admin.delete(f"{VIEWS}/{team['id']}", status=204)
    assert names(owner) == set()

    own_shared = create(owner, "Shared again", shared=True)
    owner.delete(f"{VIEWS}/{own_shared['id']}", status=204)
    assert names(colleague) == set()


def test_a_private_view_of_someone_else_answers_404(make_user):
    owner = make_user("supervisor")
    private = create(owner, "Private")
    for other in (make_user("reporter"), make_user("supervisor"), make_user("safety_manager")):
        assert_error(other.delete(f"{VIEWS}/{private['id']}", status=404), 404)
    assert_error(owner.delete(f"{VIEWS}/{private['id'] + 1000}", status=404), 404)
    assert names(owner) == {"Private"}


@pytest.mark.parametrize(("filters", "path"), [
    ({"nested": {"statuses": ["reported"]}}, "filters.nested"),  # not a filter of either page
    ({"type": {"any": "injury"}}, "filters.type"),  # a filter holds a value, not an object
    ({"q": "x" * 201}, "filters.q"),
    ({"status": ["reported"] * 21}, "filters.status"),
    ({"status": [["reported"]]}, "filters.status"),
])
def test_filters_are_bounded_to_the_known_filter_keys(make_user, filters, path):
    reporter = make_user("reporter")
    response = reporter.post_json(VIEWS, {"page": "incidents", "name": "Mine", "filters": filters},
                                  status=400)
    assert path in issue_paths(response)
    assert names(reporter) == set()


def test_filters_nested_900_levels_are_a_400_not_a_500(make_user):
    reporter = make_user("reporter")
    deep = b'{"page": "incidents", "name": "Deep", "filters": ' + b'{"a": ' * 900 + b"1" + b"}" * 901
    response = reporter.post(VIEWS, deep, content_type="application/json", status=400)
    assert "Nested too deeply" in response.json["issues"][0]["message"]
    assert names(reporter) == set()
