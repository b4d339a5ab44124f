"""Statistics (overview, analytics) and saved views. Figures count only what
the signed-in user may see; recordable cases and injury rates come from
whatever plugin registers them through `add_injury_figures` (the OSHA plugin
does, from its cases and hours)."""

from pyramid.config import Configurator

from ehs_plugins.analytics.models import SavedView


def includeme(config: Configurator) -> None:
    config.include(".figures")  # add_injury_figures
    config.add_request_method("ehs_plugins.analytics.stats.tallies_zone", "analytics_tallies_zone",
                              reify=True)
    config.add_migrations("analytics", "ehs_plugins.analytics:migrations/versions")
    config.add_route("stats.overview", "/api/stats/overview")
    config.add_route("stats.analytics", "/api/stats/analytics")
    config.add_route("views", "/api/views")
    config.add_route("view", r"/api/views/{id:\d{1,9}}")
    config.scan(".views")
    # The list page's saved views are kept per worker (ehs_core.refdata).
    config.track_reference_model(SavedView)
    config.include(".pages")
    config.include(".dashboard")
    config.include(".tallies")  # the sums the statistics read, kept by the incidents' events
    config.include(".totals")  # the incident list's total from those sums
    config.add_translation_dirs("ehs_plugins.analytics:locale")
