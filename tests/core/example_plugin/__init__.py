"""A plugin as a third party would write it, outside this repository, from
docs/plugins.md alone.

It knows the core only through what the core publishes: the directives
(`add_migrations`, `add_setting`, `add_incident_section`,
`add_incident_filter`, `add_transition_guard`, `add_identity_provider`,
`add_mail_template`), the events (`IncidentCreated`), the view options
(`body=`), `Identity`, `render` and the domain errors. The tests register it
in the `ehs.plugins` entry-point group exactly as an installed distribution
would.

What it does: every new report is tagged "new" (an event listener); the tag
shows on incidents (a section) and narrows the list (`?exampleTag=`, a
filter); a supervisor retags an incident (its own route and table, in its
own migrations); and an incident may only be closed once it carries the
closing tag (a transition guard), "reviewed" unless the setting
`example.closing_tag` (`EHS_EXAMPLE_CLOSING_TAG`) names another.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import colander
from pyramid.authorization import Allow
from pyramid.config import Configurator
from pyramid.events import subscriber
from pyramid.request import Request
from sqlalchemy import Select, select

from ehs_core.events import IncidentCreated
from ehs_core.incidents.models import Incident
from ehs_core.mail import render
from ehs_core.schemas import Str, text
from ehs_core.security import Identity, Permission
from tests.core.example_plugin.models import ExampleTag

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


def greeting(request: Request, name: str) -> dict[str, str]:
    """Render this plugin's mail template as the core's own mail does."""
    return render(request.registry, MAIL_TEMPLATE, name=name, link=f"{request.application_url}/example")


CLOSING_TAG = "example.closing_tag"


def tag_name(value: str) -> str:
    """A tag: 1 to 50 characters, no spaces around."""
    value = value.strip()
    if not 0 < len(value) <= 50:
        raise ValueError("expected a tag of 1 to 50 characters")
    return value


@subscriber(IncidentCreated)
def tag_new_reports(event: IncidentCreated) -> None:
    event.request.dbsession.add(ExampleTag(incident_id=event.incident.id, tag="new"))


def tag_section(request: Request, incidents: list[Incident]) -> dict[int, Any]:
    rows = request.dbsession.execute(select(ExampleTag.incident_id, ExampleTag.tag).where(
        ExampleTag.incident_id.in_([i.id for i in incidents])))
    return dict(rows.all())


def tagged(query: Select, value: str, request: Request) -> Select:
    return query.where(Incident.id.in_(select(ExampleTag.incident_id).where(ExampleTag.tag == value)))


def closing_needs_the_tag(request: Request, incident: Incident, transition: Any) -> str | None:
    if transition.target != "closed":
        return None
    wanted = request.registry.settings[CLOSING_TAG]
    tag = request.dbsession.get(ExampleTag, incident.id)
    return None if tag is not None and tag.tag == wanted else f"Tag the incident {wanted!r} first"


class TagSchema(colander.MappingSchema):
    tag = text(50, min_length=1)


def retag(context: Any, request: Request) -> dict:
    incident = context.incident
    row = request.dbsession.get(ExampleTag, incident.id)
    if row is None:
        row = ExampleTag(incident_id=incident.id, tag="")
        request.dbsession.add(row)
    row.tag = request.validated["tag"]
    return {"number": incident.number, "tag": row.tag}


def includeme(config: Configurator) -> None:
    config.add_migrations("example", "tests.core.example_plugin:migrations/versions")
    config.add_setting(CLOSING_TAG, "EHS_EXAMPLE_CLOSING_TAG", tag_name, "reviewed")
    config.add_incident_section("exampleTag", tag_section)
    config.add_incident_filter("exampleTag", colander.SchemaNode(Str()), tagged)
    config.add_transition_guard("example.closing_tag", closing_needs_the_tag)
    config.add_route("example.tag", r"/api/example/incidents/{number:\d{1,9}}/tag",
                     factory="ehs_core.incidents.resources.incident_factory")
    config.add_view(retag, route_name="example.tag", request_method="PUT", renderer="json",
                    permission=Permission.update_incident, body=TagSchema)
    config.scan(__name__)
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
