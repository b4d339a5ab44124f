"""Plugins: found through the `ehs.plugins` entry-point group, enabled by the
`ehs.plugins` setting, included after the core has configured and committed
itself, so they use exactly the directives the core uses (Kinto's order).

A plugin's entry point names an `includeme(config)`; its schema lives in its
own alembic history, registered with `config.add_migrations`.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib.metadata import EntryPoint, entry_points

from pyramid.config import Configurator
from pyramid.registry import Registry

from ehs_core.directives import register_once
from ehs_core.settings import SettingsError

GROUP = "ehs.plugins"


@dataclass(frozen=True)
class MigrationBranch:
    """One alembic history: the core's or a plugin's, each with its own
    version table so plugins can be enabled and disabled independently."""

    name: str
    location: str

    @property
    def version_table(self) -> str:
        return "alembic_version" if self.name == "core" else f"alembic_version_{self.name}"


def discover() -> dict[str, EntryPoint]:
    return {ep.name: ep for ep in entry_points(group=GROUP)}


def add_migrations(config: Configurator, name: str, location: str) -> None:
    """Directive: register an alembic versions directory ("pkg:path")."""

    def register() -> None:
        config.registry.setdefault("migration_branches", []).append(MigrationBranch(name, location))

    register_once(config, "ehs.migrations", name, register)


def include_enabled(config: Configurator, enabled: tuple[str, ...]) -> None:
    found = discover()
    unknown = [name for name in enabled if name not in found]
    if unknown:
        raise SettingsError(
            f"invalid setting ehs.plugins: no plugin named {', '.join(unknown)} "
            f"(installed: {', '.join(sorted(found)) or 'none'})"
        )
    for name in enabled:
        config.include(found[name].load())
    config.registry["enabled_plugins"] = enabled


def enabled_plugins(registry: Registry) -> tuple[str, ...]:
    """The names of the enabled plugins, in the order they were included."""
    return tuple(registry.get("enabled_plugins", ()))


def includeme(config: Configurator) -> None:
    config.add_directive("add_migrations", add_migrations)
