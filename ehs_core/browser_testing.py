"""pytest plugin for tests that drive the pages in a real browser: the
application served over HTTP on its own SQLite file (real commits, real
SMTP), Debian's Chromium driven by Playwright (no browser download), an
axe-core accessibility check, and a screenshot kept for every failed test
(in `test-artifacts/screenshots`)."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from ehs_core.testing import PASSWORD, Client, base_settings, free_port

CHROMIUM = os.environ.get("EHS_TEST_CHROMIUM", "/usr/bin/chromium")
SCREENSHOTS = Path(os.environ.get("EHS_TEST_ARTIFACTS", "test-artifacts")) / "screenshots"
# axe-core impacts that fail a test (WCAG 2.2 AA rules and best practices).
BLOCKING = ("serious", "critical")


@dataclass
class Live:
    url: str
    app: Any
    registry: Any

    def client(self) -> Client:
        """A webtest client on the same application (to set up data through the API)."""
        return Client(self.app, origin=self.url)

    def admin(self) -> Client:
        browser = self.client()
        if browser.get("/api/setup").json["needsSetup"]:
            browser.post_json("/api/setup", {"organizationName": "Acme Works", "name": "Ada Admin",
                                             "email": "admin@acme.test", "password": PASSWORD})
        else:
            browser.login("admin@acme.test")
        return browser


@pytest.fixture
def live_port() -> int:
    """The port `live` serves on (known before it starts, for a server the
    test runs beside it that must know its address)."""
    return free_port()


@pytest.fixture
def live_settings() -> dict[str, Any]:
    """Settings of the `live` application beyond the tests' own; a test
    module overrides this fixture to give its own (the company sign-in's)."""
    return {}


@pytest.fixture
def live_database(tmp_path: Path) -> str:
    """The `live` application's database: a SQLite file of its own; a test
    module overrides this fixture to run on another (PostgreSQL)."""
    return f"sqlite:///{tmp_path}/live.sqlite"


@pytest.fixture
def live(tmp_path: Path, smtp_server: Any, monkeypatch: pytest.MonkeyPatch, live_port: int,
         live_settings: dict[str, Any], live_database: str) -> Iterator[Live]:
    """The application on a fresh database (a SQLite file unless
    `live_database` says otherwise), served over HTTP."""
    from webtest.http import StopableWSGIServer

    from ehs_core.config import configure
    from ehs_core.jobs import start_in_process_runner
    from ehs_core.migrations import upgrade

    for name in [k for k in os.environ if k.startswith("EHS_") and not k.startswith("EHS_TEST_")]:
        monkeypatch.delenv(name)
    monkeypatch.delenv("MAX_UPLOAD_MB", raising=False)
    port = live_port
    url = f"http://127.0.0.1:{port}"
    database = live_database
    settings = base_settings(database, smtp_server.port, str(tmp_path / "uploads"))
    config = configure(dict(settings, **{"sqlalchemy.url": database, "ehs.public_url": url}, **live_settings))
    upgrade(config.registry)
    app = config.make_wsgi_app()
    runner = start_in_process_runner(config.registry, periodic=False)  # mail goes out, as under pserve
    server = StopableWSGIServer.create(app, host="127.0.0.1", port=port, threads=4)
    try:
        assert server.wait(), "the live server did not start"
        yield Live(url, app, config.registry)
    finally:
        server.shutdown()
        if runner is not None:
            runner.stop()
        config.registry["db.engine"].dispose()


@pytest.fixture(scope="session")
def playwright_browser() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    if not os.path.exists(CHROMIUM):
        pytest.fail(f"Chromium is needed at {CHROMIUM} (apt-get install chromium; .ci/run installs it)")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM,
                                             args=["--no-sandbox", "--disable-dev-shm-usage"])
        yield browser
        browser.close()


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item: pytest.Item, call: Any) -> Any:
    report = yield
    setattr(item, f"report_{report.when}", report)
    return report


@pytest.fixture
def new_page(playwright_browser: Any, request: pytest.FixtureRequest) -> Iterator[Callable[..., Any]]:
    """`new_page(viewport=(w, h))`: a fresh browser context (its own cookies);
    a screenshot of each is kept when the test fails."""
    contexts: list[Any] = []

    def make(viewport: tuple[int, int] = (1280, 900), locale: str = "en-US", **kw: Any) -> Any:
        """`locale`: the browser's language (its Accept-Language)."""
        context = playwright_browser.new_context(viewport={"width": viewport[0], "height": viewport[1]},
                                                 locale=locale, **kw)
        context.set_default_timeout(10_000)
        contexts.append(context)
        return context.new_page()

    yield make
    report = getattr(request.node, "report_call", None)
    if report is not None and report.failed:
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        for n, context in enumerate(contexts):
            for m, page in enumerate(context.pages):
                name = f"{request.node.name}-{n}-{m}.png".replace("/", "_")
                if not page.is_closed():
                    page.screenshot(path=str(SCREENSHOTS / name), full_page=True)
    for context in contexts:
        context.close()


def accessibility_problems(page: Any) -> list[str]:
    """axe-core's serious and critical violations on the page as it is now."""
    from axe_playwright_python.sync_playwright import Axe

    results = Axe().run(page)
    problems = []
    for violation in results.response["violations"]:
        if violation.get("impact") in BLOCKING:
            targets = [", ".join(node["target"]) for node in violation["nodes"][:3]]
            problems.append(f"{violation['id']} ({violation['impact']}): {violation['help']} at {targets}")
    return problems


def assert_accessible(page: Any) -> None:
    problems = accessibility_problems(page)
    assert not problems, f"{page.url}:\n" + "\n".join(problems)
