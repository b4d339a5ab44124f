"""The framework's own ceiling: a bare Pyramid app with one view returning a
small JSON document, served by the same gunicorn settings as the service
(`gunicorn bench.bare:app`)."""

from __future__ import annotations

from typing import Any

from pyramid.config import Configurator
from pyramid.request import Request


def hello(request: Request) -> dict[str, Any]:
    return {"ok": True, "service": "bare", "items": [{"id": 1, "name": "one"}, {"id": 2, "name": "two"}]}


def make_app() -> Any:
    with Configurator() as config:
        config.add_route("hello", "/")
        config.add_view(hello, route_name="hello", renderer="json")
        return config.make_wsgi_app()


app = make_app()
