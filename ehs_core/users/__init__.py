"""Users of the organization and their roles."""

from pyramid.config import Configurator


def includeme(config: Configurator) -> None:
    config.add_route("users", "/api/users")
    config.add_route("users.assignable", "/api/users/assignable")
    config.add_route("user", r"/api/users/{id:\d{1,9}}")
    config.scan(".views")
    config.include(".pages")  # /admin/users
