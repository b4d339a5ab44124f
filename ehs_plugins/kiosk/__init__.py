"""The kiosk plugin."""

from pyramid.config import Configurator


def includeme(config: Configurator) -> None:
    config.add_migrations("kiosk", "ehs_plugins.kiosk:migrations/versions")
