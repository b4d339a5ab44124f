"""Paths of named routes for a view that links many of one kind (an
incident's files, actions and causes): `request.route_path` by name, in a
shape a template can write as values."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from pyramid.request import Request


def route_path(request: Request, name: str, **parts: Any) -> str:
    """`request.route_path(name, **parts)`."""
    return request.route_path(name, **parts)


def route_paths(request: Request, names: dict[str, str], **parts: Any) -> dict[str, str]:
    """{key: path} of the routes `names` ({key: route name}), each made
    with the same `parts` (an incident's number, say)."""
    return {key: request.route_path(name, **parts) for key, name in names.items()}


def path_maker(request: Request, name: str) -> Callable[..., str]:
    """A function writing `request.route_path(name, **parts)` for many `parts`."""
    return lambda **parts: request.route_path(name, **parts)


def paths_by_id(request: Request, name: str, ids: Iterable[Any], part: str = "id") -> dict[Any, str]:
    """{id: path} of one route for each of `ids` (a page's files, actions)."""
    return {value: request.route_path(name, **{part: value}) for value in ids}
