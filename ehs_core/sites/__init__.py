"""Sites and the areas within them (with establishment data for the records)."""

from pyramid.config import Configurator


def includeme(config: Configurator) -> None:
    config.add_route("sites", "/api/sites")
    config.add_route("site", r"/api/sites/{id:\d{1,9}}")
    config.add_route("site.areas", r"/api/sites/{id:\d{1,9}}/areas")
    config.add_route("area", r"/api/areas/{id:\d{1,9}}")
    config.scan(".views")
    config.include(".pages")  # /admin/sites
