"""Users of the organization and their roles."""

from pyramid.config import Configurator
from pyramid.events import BeforeRender

from ehs_core.security import identity_of
from ehs_core.users.models import Organization, User


def layout_organization(event: BeforeRender) -> None:
    """The organization's name in every page's layout, for a signed-in
    person: read with the session by the identity, else here."""
    request = event.get("request")
    renderer = event.get("renderer_name") or ""
    if request is None or "organization_name" in event or not renderer.endswith(".html"):
        return
    identity = identity_of(request)
    organization = None
    if identity is not None and identity.is_user:
        organization = identity.extra.get("organization")
        if organization is None:
            found = request.dbsession.get(Organization, identity.account.organization_id)
            organization = {"name": found.name} if found is not None else None
    event["organization_name"] = organization["name"] if organization is not None else None


def includeme(config: Configurator) -> None:
    config.add_subscriber(layout_organization, BeforeRender)
    config.add_route("users", "/api/users")
    config.add_route("users.assignable", "/api/users/assignable")
    config.add_route("user", r"/api/users/{id:\d{1,9}}")
    # Names and the assignable people are kept per worker (ehs_core.refdata).
    config.track_reference_model(User, ("name", "role", "active", "organization_id"))
    config.scan(".views")
    config.include(".pages")  # /admin/users
