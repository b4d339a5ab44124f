"""The California plugin's tests run against an application of their own
(`osha calosha`), on the session's database with the plugin's history
migrated, sharing each test's transaction."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from ehs_core.config import configure
from ehs_core.jobs import start_in_process_runner
from ehs_core.migrations import upgrade
from ehs_core.testing import Client, new_site

PLUGINS = "osha calosha"


@pytest.fixture(scope="session")
def calosha_registry(app_settings: dict[str, Any], registry: Any) -> Iterator[Any]:
    config = configure(dict(app_settings, **{"ehs.plugins": PLUGINS}))
    upgrade(config.registry)
    config.registry["wsgi_app"] = config.make_wsgi_app()
    runner = start_in_process_runner(config.registry, periodic=False, inline=True)
    yield config.registry
    if runner is not None:
        runner.stop()
    config.registry["db.engine"].dispose()


@pytest.fixture
def app(calosha_registry: Any, registry: Any, dbsession: Any, inbox: Any) -> Iterator[Any]:
    calosha_registry["dbsession_factory"] = registry["dbsession_factory"]
    yield calosha_registry
    runner = calosha_registry.get("job_runner")
    if runner is not None:
        runner.wait_idle()


@pytest.fixture
def as_user(app: Any, admin: Client, make_user: Callable[..., Client]) -> Callable[..., Client]:
    """`as_user(role, name=None)`: a client of the California app, signed in as a new user."""

    def make(role: str, name: str | None = None) -> Client:
        created = make_user(role, name=name)
        browser = Client(app["wsgi_app"])
        browser.login(created.user["email"])
        browser.user = created.user
        return browser

    return make


@pytest.fixture
def cal_admin(app: Any, admin: Client) -> Client:
    browser = Client(app["wsgi_app"])
    browser.login("admin@acme.test")
    return browser


def site_in(admin: Client, name: str, state: str, timezone: str) -> int:
    site = new_site(admin, name, timezone=timezone)["id"]
    admin.patch_json(f"/api/sites/{site}", {"state": state})
    return site


@pytest.fixture
def ca_site(admin: Client) -> int:
    return site_in(admin, "Oakland Yard", "CA", "America/Los_Angeles")


@pytest.fixture
def tx_site(admin: Client) -> int:
    return site_in(admin, "Austin Depot", "TX", "America/Chicago")
