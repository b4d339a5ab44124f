"""What every request costs before its view: kept small on purpose.

Pyramid adds the request properties registered with `add_request_method`
(`request.dbsession`, pyramid_tm's `request.tm`) by making a new class for
every request (`InstancePropertyHelper.apply_properties` calls `type()`).
`bake_request_extensions` puts them on one request class made
once, at start-up, after the core and the plugins registered theirs: the
router then has nothing left to add per request, and every request has the
same properties as before (reified: computed once, on first use).

`json_answer` writes the answers of `renderer="json"` views without the
renderer machinery (a system-values dict, a `BeforeRender` event, an adapter
lookup): the same `json.dumps` text in
the same `request.response`. No listener of `BeforeRender` reads JSON
answers (the pages' layout values are for `.html` templates); an answer
that `json.dumps` cannot write alone (an object with `__json__`) still goes
through the renderer.
"""

from __future__ import annotations

import json
from typing import Any

from pyramid.config import Configurator
from pyramid.interfaces import IRequestExtensions, IRequestFactory
from pyramid.request import Request
from pyramid.response import Response
from pyramid.viewderivers import VIEW


class _Extensions:
    """Pyramid's request extensions (the shape `apply_request_extensions`
    reads): what is left to add per request."""

    def __init__(self) -> None:
        self.descriptors: dict = {}
        self.methods: dict = {}


def bake_request_extensions(config: Configurator) -> None:
    """Move the registered request properties and methods onto a request
    class of their own, made once; call after the last commit (a property
    registered later is still added per request, as Pyramid does)."""
    registry = config.registry
    extensions = registry.queryUtility(IRequestExtensions)
    if extensions is None or not (extensions.descriptors or extensions.methods):
        return
    base = registry.queryUtility(IRequestFactory, default=Request)
    attrs = {"__module__": base.__module__, **extensions.methods, **extensions.descriptors}
    request_class = type(base.__name__, (base,), attrs)
    # As Pyramid's per-request classes do: look like the parent to
    # zope.interface (no interface declarations of its own to build).
    for name in ("__implemented__", "__provides__"):
        if hasattr(base, name):
            setattr(request_class, name, getattr(base, name))
    registry.registerUtility(request_class, IRequestFactory)
    registry.registerUtility(_Extensions(), IRequestExtensions)


# The header of a new `request.response` (Pyramid's Response: text/html in
# UTF-8), and what the JSON renderer makes of it (webob drops the charset
# of application/json; its text is encoded in UTF-8).
DEFAULT_CONTENT_TYPE = ("Content-Type",
                        f"{Response.default_content_type}; charset={Response.default_charset}")
JSON_CONTENT_TYPE = ("Content-Type", "application/json")


def json_answer(view: Any, info: Any) -> Any:
    """View deriver, under Pyramid's `rendered_view`: the JSON answer of a
    `renderer="json"` view that returned a dict or a list, written as
    Pyramid's JSON renderer writes it (see the module's docstring)."""
    renderer = info.options.get("renderer")
    if info.exception_only or getattr(renderer, "name", None) != "json":
        return view
    dumps = json.dumps

    def wrapper(context: Any, request: Request) -> Any:
        result = view(context, request)
        if result.__class__ is not dict and result.__class__ is not list:
            return result
        if "override_renderer" in request.__dict__:
            return result
        try:
            text = dumps(result)
        except TypeError:
            return result  # the renderer's default knows more types (__json__)
        response = request.response
        if json_content_type(response):
            response.body = text.encode()
        else:
            response.text = text
        return response

    return wrapper


def json_content_type(response: Response) -> bool:
    """Make `response` a JSON answer's, as the JSON renderer does (also for
    a view that writes its body itself: `ehs_core.incidents.views.create`);
    True when its header was the default one, replaced in place (its body is
    then set as bytes, without webob parsing and rebuilding the header)."""
    headerlist = response.headerlist
    if headerlist and headerlist[0] == DEFAULT_CONTENT_TYPE:
        headerlist[0] = JSON_CONTENT_TYPE
        return True
    if response.content_type == response.default_content_type:
        response.content_type = "application/json"
    return False


def includeme(config: Configurator) -> None:
    config.add_view_deriver(json_answer, under="rendered_view", over=VIEW)
