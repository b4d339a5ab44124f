"""The pages' links made without `request.route_path`'s options are the
paths `request.route_path` writes, at the root and under a mount point."""

from __future__ import annotations

from typing import Any

import pytest
from pyramid.request import Request, apply_request_extensions

from ehs_core.ui.paths import path_maker, paths_by_id, route_path, route_paths

ROUTES = [("page.incident_comments", {"number": 42}), ("page.incident_edit", {"number": 7}),
          ("page.root_cause_whys", {"number": 42, "cause": 5}), ("attachment", {"id": 123}),
          ("page.action", {"id": 9}), ("home", {}), ("page.account", {})]


@pytest.mark.parametrize("script_name", ["", "/safety"])
def test_paths_are_route_paths(registry: Any, script_name: str) -> None:
    request = Request.blank("/", base_url=f"http://example.test{script_name}")
    request.registry = registry
    apply_request_extensions(request)
    for name, parts in ROUTES:
        assert route_path(request, name, **parts) == request.route_path(name, **parts)
    assert route_paths(request, {"c": "page.incident_comments", "e": "page.incident_edit"}, number=42) == {
        "c": request.route_path("page.incident_comments", number=42),
        "e": request.route_path("page.incident_edit", number=42)}
    assert paths_by_id(request, "attachment", [1, 2]) == {
        1: f"{script_name}/api/attachments/1", 2: f"{script_name}/api/attachments/2"}
    assert route_path(request, "page.incident_comments", number=42) == f"{script_name}/incidents/42/comments"
    whys = path_maker(request, "page.root_cause_whys")
    assert [whys(number=42, cause=c) for c in (1, 2)] == [
        request.route_path("page.root_cause_whys", number=42, cause=c) for c in (1, 2)]


def test_parts_that_are_not_whole_numbers_are_quoted_as_pyramid_quotes_them(registry: Any) -> None:
    """Only whole numbers are written into a route's format string; text,
    which may need quoting, goes through the route's generator."""
    request = Request.blank("/")
    request.registry = registry
    apply_request_extensions(request)
    for number in (42, "4 2/x", "élan", True, -3):
        assert route_path(request, "page.incident_edit", number=number) == request.route_path(
            "page.incident_edit", number=number)
    assert route_path(request, "page.incident_edit", number="4 2/x") == "/incidents/4%202/x/edit"


def test_an_unknown_route_is_an_error_as_with_pyramid(registry: Any) -> None:
    request = Request.blank("/")
    request.registry = registry
    with pytest.raises(KeyError):
        route_path(request, "no.such.route")
