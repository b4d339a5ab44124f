"""Paths of named routes as pages write them by the dozen: an incident's
page links each of its forms, files, actions and causes.

`request.route_path` works out a query, an anchor, extra elements, a
scheme and a host it is not given before the route generates its path,
and a template calls it through Jinja's `Context.call`: ten of them were a
tenth of the incident page. A view reads the paths its page needs here,
once, and the template writes them as values.

A path whose parts are whole numbers (an incident's number, a file's id)
is written from a format string made once per route ("/incidents/{number}/
edit"): digits need no quoting, and Pyramid's generator quotes every part
again (a tenth of the incident page's paths' cost with the CPU's caches
cold, for the seven or eight it links).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from pyramid.interfaces import IRoutesMapper
from pyramid.request import Request

_NOT_MADE = object()
# Each route's format string by the names of its parts (None: the route's
# generator writes something a format cannot, a remainder, say).
_FORMATS: dict[tuple[Any, tuple[str, ...]], str | None] = {}


def generated(route: Any, parts: dict[str, Any]) -> str:
    """`route.generate(parts)`, from the route's format string when every
    part is a whole number."""
    for value in parts.values():
        if type(value) is not int:
            return route.generate(parts)
    key = (route, tuple(parts))
    found = _FORMATS.get(key, _NOT_MADE)
    if found is _NOT_MADE:
        found = _FORMATS[key] = _format_of(route, key[1])
    return route.generate(parts) if found is None else found.format_map(parts)


def _format_of(route: Any, names: tuple[str, ...]) -> str | None:
    """The route's path with each part a format field, made from what its
    generator writes for a mark of letters and digits in each (which no
    quoting changes), and kept only if it writes what the generator writes
    for numbers."""
    marks = {name: f"ehs0{index}0part" for index, name in enumerate(names)}
    try:
        sample = route.generate(dict(marks))
    except (KeyError, ValueError, TypeError):
        return None
    if any(sample.count(mark) != 1 for mark in marks.values()):
        return None
    found = sample.replace("{", "{{").replace("}", "}}")
    for name, mark in marks.items():
        found = found.replace(mark, "{" + name + "}")
    probe = {name: 1234567 + index for index, name in enumerate(names)}
    return found if found.format_map(probe) == route.generate(dict(probe)) else None


def route_path(request: Request, name: str, **parts: Any) -> str:
    """`request.route_path(name, **parts)` without a query or an anchor:
    the mount point and the route's own generated path, as Pyramid joins
    them (a route with a pregenerator goes through Pyramid)."""
    route = request.registry.getUtility(IRoutesMapper).get_route(name)
    if route is None or route.pregenerator is not None:
        return request.route_path(name, **parts)
    return request.script_name + generated(route, parts)


def route_paths(request: Request, names: dict[str, str], **parts: Any) -> dict[str, str]:
    """{key: path} of the routes `names` ({key: route name}), each made
    with the same `parts` (an incident's number, say)."""
    mapper = request.registry.getUtility(IRoutesMapper)
    prefix = request.script_name
    paths = {}
    for key, name in names.items():
        route = mapper.get_route(name)
        paths[key] = (request.route_path(name, **parts) if route is None or route.pregenerator is not None
                      else prefix + generated(route, dict(parts)))
    return paths


def path_maker(request: Request, name: str) -> Callable[..., str]:
    """A function writing `route_path(request, name, **parts)` for many
    `parts` (one per root cause of an incident), the route looked up once."""
    route = request.registry.getUtility(IRoutesMapper).get_route(name)
    if route is None or route.pregenerator is not None:
        return lambda **parts: request.route_path(name, **parts)
    prefix = request.script_name
    return lambda **parts: prefix + generated(route, parts)


def paths_by_id(request: Request, name: str, ids: Iterable[Any], part: str = "id") -> dict[Any, str]:
    """{id: path} of one route for each of `ids` (a page's files, actions)."""
    path = path_maker(request, name)
    return {value: path(**{part: value}) for value in ids}
