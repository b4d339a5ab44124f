"""Sites and the areas within them (with establishment data for the records)."""

from pyramid.config import Configurator

from ehs_core.sites.models import Area, Site


def includeme(config: Configurator) -> None:
    config.add_route("sites", "/api/sites")
    config.add_route("site", r"/api/sites/{id:\d{1,9}}")
    config.add_route("site.areas", r"/api/sites/{id:\d{1,9}}/areas")
    config.add_route("area", r"/api/areas/{id:\d{1,9}}")
    # The pickers' sites and areas are kept per worker (ehs_core.refdata).
    config.track_reference_model(Site)
    config.track_reference_model(Area)
    config.scan(".views")
    config.include(".pages")  # /admin/sites
