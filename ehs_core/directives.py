"""Registration shared by the core's directives."""

from __future__ import annotations

from collections.abc import Callable

from pyramid.config import Configurator
from pyramid.exceptions import ConfigurationError


def register_once(config: Configurator, kind: str, name: str, register: Callable[[], None]) -> None:
    """Queue a directive's registration under the discriminator (kind, name).

    Pyramid reports two claims in one commit as a conflict, but lets a later
    commit override an earlier one silently; plugins are included in a later
    commit than the core, so a second claim on a name is refused here too.
    """

    def checked() -> None:
        claimed = config.registry.setdefault("ehs.claimed", set())
        if (kind, name) in claimed:
            raise ConfigurationError(f"{kind} {name!r} is already registered")
        claimed.add((kind, name))
        register()

    config.action((kind, name), checked)
