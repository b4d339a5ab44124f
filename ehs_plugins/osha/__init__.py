"""The osha plugin."""

from pyramid.config import Configurator


def includeme(config: Configurator) -> None:
    config.add_migrations("osha", "ehs_plugins.osha:migrations/versions")
