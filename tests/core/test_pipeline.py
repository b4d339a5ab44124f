"""The answers written without Pyramid's per-request renderer machinery
(`ehs_core.pipeline`) are the ones Pyramid's renderer writes: the same
body, status, headers and system values, the `BeforeRender` listeners
still heard."""

from __future__ import annotations

from pathlib import Path

from pyramid.config import Configurator
from pyramid.events import BeforeRender
from pyramid.httpexceptions import HTTPFound
from webtest import TestApp

TEMPLATE = ("{{ renderer_name }} {{ request.path }} {{ context.__class__.__name__ }} {{ req.path }} "
            "{{ view.__name__ }} {{ get_csrf_token is defined }} {{ heard }} {{ value }} {{ text }}")


def _app(folder: Path) -> TestApp:
    (folder / "page.html").write_text(TEMPLATE)
    config = Configurator(settings={"pyramid.reload_templates": "false"})
    config.include("pyramid_jinja2")
    config.add_jinja2_renderer(".html")
    config.add_jinja2_search_path(str(folder), name=".html")
    config.include("ehs_core.pipeline")

    def listener(event: BeforeRender) -> None:
        event["heard"] = f"heard {event['renderer_name']}"

    config.add_subscriber(listener, BeforeRender)

    def page(request):
        request.response.status = 201
        return {"value": "<b>&</b>", "text": "Zoë"}

    def overridden(request):
        request.override_renderer = "page.html"  # Pyramid's own renderer
        request.response.status = 201
        return {"value": "<b>&</b>", "text": "Zoë"}

    def moved(request):
        return HTTPFound("/page")

    for name, view in (("page", page), ("overridden", overridden), ("moved", moved)):
        config.add_route(name, f"/{name}")
        config.add_view(view, route_name=name, renderer="page.html")
    return TestApp(config.make_wsgi_app())


def test_a_page_is_written_as_pyramids_renderer_writes_it(tmp_path):
    app = _app(tmp_path)
    ours = app.get("/page", status=201)
    pyramids = app.get("/overridden", status=201)
    assert ours.body == pyramids.body.replace(b"/overridden", b"/page").replace(b"overridden", b"page")
    assert ours.text == ("page.html /page DefaultRootFactory /page page True heard page.html "
                         "&lt;b&gt;&amp;&lt;/b&gt; Zoë")
    assert ours.headers["Content-Type"] == pyramids.headers["Content-Type"] == "text/html; charset=UTF-8"
    assert app.get("/moved", status=302).headers["Location"].endswith("/page")
