"""A plugin as a third party would write it, outside this repository.

It knows the core only through what the core publishes: the directives
(`add_identity_provider`, `add_mail_template`), `Identity` and `render`.
The tests register it in the `ehs.plugins` entry-point group exactly as an
installed distribution would.
"""

from __future__ import annotations

from pathlib import Path

from pyramid.authorization import Allow
from pyramid.config import Configurator
from pyramid.request import Request

from ehs_core.mail import render
from ehs_core.security import Identity

BADGE_HEADER = "X-Example-Badge"
VIEW_PERMISSION = "example.view"
MAIL_TEMPLATE = "example.greeting"
ENTRY_POINT = f"{__name__}:includeme"


class ExampleResource:
    """Only callers recognised by this plugin's identity provider may look."""

    __acl__ = [(Allow, "example:badge", VIEW_PERMISSION)]

    def __init__(self, request: Request) -> None:
        self.request = request


def badge_identity(request: Request) -> Identity | None:
    badge = request.headers.get(BADGE_HEADER, "")
    if not badge.isdigit():
        return None
    return Identity(kind="badge", id=int(badge), principals=["example:badge", f"badge:{badge}"])


def example_view(request: Request) -> dict:
    return {"plugin": "example", "caller": {"kind": request.identity.kind, "id": request.identity.id}}


def greeting(request: Request, name: str) -> tuple[str, str]:
    """Render this plugin's mail template as the core's own mail does."""
    return render(request.registry, MAIL_TEMPLATE, name=name, link=f"{request.application_url}/example")


def includeme(config: Configurator) -> None:
    config.add_identity_provider("example.badge", badge_identity)
    config.add_mail_template(MAIL_TEMPLATE, "ehs_core.mail:templates/magic_link.txt")
    config.add_route("example", "/api/example", factory=ExampleResource)
    config.add_view(example_view, route_name="example", request_method="GET", renderer="json",
                    permission=VIEW_PERMISSION)


def install_distribution(site: Path, name: str = "example") -> Path:
    """Write the metadata an installed `ehs-example-plugin` wheel leaves in
    site-packages: its entry point in the `ehs.plugins` group. Put `site` on
    sys.path (or PYTHONPATH) and importlib.metadata finds it."""
    dist_info = site / "ehs_example_plugin-1.0.dist-info"
    dist_info.mkdir(parents=True, exist_ok=True)
    (dist_info / "METADATA").write_text("Metadata-Version: 2.1\nName: ehs-example-plugin\nVersion: 1.0\n")
    (dist_info / "entry_points.txt").write_text(f"[ehs.plugins]\n{name} = {ENTRY_POINT}\n")
    return site
