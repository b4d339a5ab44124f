"""Paths of named routes as pages write them by the dozen: an incident's
page links each of its forms, files, actions and causes.

`request.route_path` works out a query, an anchor, extra elements, a
scheme and a host it is not given before the route generates its path,
and a template calls it through Jinja's `Context.call`: ten of them were a
tenth of the incident page. A view reads the paths its page needs here,
once, and the template writes them as values.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from pyramid.interfaces import IRoutesMapper
from pyramid.request import Request


def route_path(request: Request, name: str, **parts: Any) -> str:
    """`request.route_path(name, **parts)` without a query or an anchor:
    the mount point and the route's own generated path, as Pyramid joins
    them (a route with a pregenerator goes through Pyramid)."""
    route = request.registry.getUtility(IRoutesMapper).get_route(name)
    if route is None or route.pregenerator is not None:
        return request.route_path(name, **parts)
    return request.script_name + route.generate(parts)


def route_paths(request: Request, names: dict[str, str], **parts: Any) -> dict[str, str]:
    """{key: path} of the routes `names` ({key: route name}), each made
    with the same `parts` (an incident's number, say)."""
    mapper = request.registry.getUtility(IRoutesMapper)
    prefix = request.script_name
    paths = {}
    for key, name in names.items():
        route = mapper.get_route(name)
        paths[key] = (request.route_path(name, **parts) if route is None or route.pregenerator is not None
                      else prefix + route.generate(dict(parts)))
    return paths


def path_maker(request: Request, name: str) -> Callable[..., str]:
    """A function writing `route_path(request, name, **parts)` for many
    `parts` (one per root cause of an incident), the route looked up once."""
    route = request.registry.getUtility(IRoutesMapper).get_route(name)
    if route is None or route.pregenerator is not None:
        return lambda **parts: request.route_path(name, **parts)
    prefix, generate = request.script_name, route.generate
    return lambda **parts: prefix + generate(parts)


def paths_by_id(request: Request, name: str, ids: Iterable[Any], part: str = "id") -> dict[Any, str]:
    """{id: path} of one route for each of `ids` (a page's files, actions)."""
    path = path_maker(request, name)
    return {value: path(**{part: value}) for value in ids}
