from __future__ import annotations

from collections.abc import Iterator
from importlib.metadata import EntryPoint
from typing import Any

import pytest

import ehs_core.plugins
from ehs_core.config import configure
from ehs_core.jobs import start_in_process_runner
from ehs_core.plugins import GROUP
from ehs_core.testing import Client
from tests.core.obligations import kinds

NAME = "obligations_test"


def with_kinds(monkeypatch: pytest.MonkeyPatch) -> None:
    """`discover()` also finds the test plugin, as if it were installed."""
    real = ehs_core.plugins.discover
    entry = EntryPoint(name=NAME, value=kinds.ENTRY_POINT, group=GROUP)
    monkeypatch.setattr(ehs_core.plugins, "discover", lambda: {**real(), NAME: entry})


@pytest.fixture(scope="session")
def kinds_registry(app_settings: dict[str, Any], registry: Any) -> Iterator[Any]:
    """An application with the test plugin's kinds, on the session's database
    (the core's migrations made the table)."""
    with pytest.MonkeyPatch.context() as patch:
        with_kinds(patch)
        config = configure(dict(app_settings, **{"ehs.plugins": f"osha {NAME}"}))
    config.registry["wsgi_app"] = config.make_wsgi_app()
    runner = start_in_process_runner(config.registry, periodic=False, inline=True)
    yield config.registry
    if runner is not None:
        runner.stop()
    config.registry["db.engine"].dispose()


@pytest.fixture
def app(kinds_registry: Any, registry: Any, dbsession: Any, inbox: Any) -> Iterator[Any]:
    """The kinds app on the test's transaction (and its mail runner idle)."""
    kinds_registry["dbsession_factory"] = registry["dbsession_factory"]
    runner = kinds_registry.get("job_runner")
    yield kinds_registry
    if runner is not None:
        runner.wait_idle()


@pytest.fixture
def as_user(app: Any, admin: Client, make_user: Any) -> Any:
    """`as_user(role)`: a client of the kinds app signed in as a new user of that role."""

    def make(role: str) -> Client:
        created = make_user(role)
        browser = Client(app["wsgi_app"])
        browser.login(created.user["email"])
        browser.user = created.user
        return browser

    return make
