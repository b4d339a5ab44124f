"""The analytics plugin."""

from pyramid.config import Configurator


def includeme(config: Configurator) -> None:
    config.add_migrations("analytics", "ehs_plugins.analytics:migrations/versions")
