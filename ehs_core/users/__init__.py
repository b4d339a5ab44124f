"""Users of the organization and their roles."""

from pyramid.config import Configurator

from ehs_core.users.models import User


def includeme(config: Configurator) -> None:
    config.add_route("users", "/api/users")
    config.add_route("users.assignable", "/api/users/assignable")
    config.add_route("user", r"/api/users/{id:\d{1,9}}")
    # Names and the assignable people are kept per worker (ehs_core.refdata).
    config.track_reference_model(User, ("name", "role", "active", "organization_id"))
    config.scan(".views")
    config.include(".pages")  # /admin/users
