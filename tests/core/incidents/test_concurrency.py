"""Numbering and clientId idempotency under concurrent requests, against a
real PostgreSQL database with real commits (no outer test transaction:
SQLite serialises writers and would hide races).

Each test gets a fresh database, its own application and one webtest client
per thread, all released together by a barrier.
"""

from __future__ import annotations

import os
import threading
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import sqlalchemy as sa
import webtest
from sqlalchemy.engine import make_url

from ehs_core.auth.sessions import COOKIE_NAME
from ehs_core.testing import PASSWORD, PUBLIC_URL, base_settings
from tests.core.incidents import INCIDENTS, WORD_COUNT_DRIFT, report_body

pytestmark = [
    pytest.mark.postgres,
    pytest.mark.skipif(not os.environ.get("EHS_TEST_POSTGRES_URL"),
                       reason="needs EHS_TEST_POSTGRES_URL (a PostgreSQL server)"),
]

THREADS = 8
REPORTS = 200
SAME_KEY_REQUESTS = 10
ROUNDS = 5


class LiveApp:
    """The application on its own PostgreSQL database, set up with an admin
    and one site."""

    def __init__(self, app: Any, engine: sa.Engine) -> None:
        self.app = app
        self.engine = engine
        owner = self.browser()
        owner.post_json("/api/setup", {"organizationName": "Acme Works", "name": "Ada Admin",
                                       "email": "admin@acme.test", "password": PASSWORD}, status=201)
        self.cookie = owner.cookies[COOKIE_NAME]
        self.site_id = owner.post_json("/api/sites", {"name": "Plant North"}, status=201).json["id"]
        self.owner = owner

    def browser(self) -> webtest.TestApp:
        return webtest.TestApp(self.app, extra_environ={"HTTP_ORIGIN": PUBLIC_URL,
                                                        "REMOTE_ADDR": "127.0.0.1"})

    def signed_in(self) -> webtest.TestApp:
        """A new client carrying a copy of the admin's session cookie."""
        browser = self.browser()
        browser.set_cookie(COOKIE_NAME, self.cookie)
        return browser

    def scalar(self, sql: str, **params: Any) -> Any:
        with self.engine.connect() as connection:
            return connection.execute(sa.text(sql), params).scalar()

    def numbers(self) -> list[int]:
        with self.engine.connect() as connection:
            return list(connection.execute(sa.text("SELECT number FROM incidents ORDER BY number")).scalars())


@pytest.fixture
def live(smtp_server: Any, tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> Iterator[LiveApp]:
    from ehs_core.config import configure
    from ehs_core.migrations import upgrade

    # The same environment the session's registry fixture builds its app in.
    for key in [k for k in os.environ if k.startswith("EHS_") and not k.startswith("EHS_TEST_")]:
        monkeypatch.delenv(key)
    monkeypatch.delenv("MAX_UPLOAD_MB", raising=False)
    monkeypatch.delenv("TZ", raising=False)

    server = make_url(os.environ["EHS_TEST_POSTGRES_URL"]).set(drivername="postgresql+psycopg")
    name = f"ehs_race_{uuid.uuid4().hex[:12]}"
    admin_engine = sa.create_engine(server, isolation_level="AUTOCOMMIT")
    with admin_engine.connect() as connection:
        connection.exec_driver_sql(f'CREATE DATABASE "{name}"')
    config = None
    try:
        url = server.set(database=name).render_as_string(hide_password=False)
        # base_settings is what the app_settings fixture is made of; used
        # directly so this module does not also run once per backend.
        settings = base_settings(url, smtp_server.port, str(tmp_path / "uploads"))
        config = configure(dict(settings, **{"sqlalchemy.url": url}))
        upgrade(config.registry)
        yield LiveApp(config.make_wsgi_app(), config.registry["db.engine"])
    finally:
        if config is not None:
            config.registry["db.engine"].dispose()
        with admin_engine.connect() as connection:
            connection.exec_driver_sql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        admin_engine.dispose()


def run_together(count: int, work: Callable[[int, threading.Barrier], Any]) -> list[Any]:
    """Run work(index, barrier) in `count` threads; return results in index order.
    An exception in a thread is returned as its result."""
    barrier = threading.Barrier(count, timeout=60)
    results: list[Any] = [None] * count

    def target(index: int) -> None:
        try:
            results[index] = work(index, barrier)
        except BaseException as exc:  # reported by the test below
            barrier.abort()
            results[index] = exc

    threads = [threading.Thread(target=target, args=(i,), name=f"race-{i}") for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=180)
    assert not any(thread.is_alive() for thread in threads), "a request thread hung"
    errors = [r for r in results if isinstance(r, BaseException)]
    assert not errors, errors
    return results


def test_concurrent_reports_get_every_number_exactly_once(live):
    clients = [live.signed_in() for _ in range(THREADS)]
    per_thread = REPORTS // THREADS
    assert per_thread * THREADS == REPORTS

    def work(index: int, barrier: threading.Barrier) -> list[tuple[int, int]]:
        browser = clients[index]
        barrier.wait()
        answers = []
        for n in range(per_thread):
            response = browser.post_json(INCIDENTS, report_body(live.site_id, title=f"T{index} R{n}"),
                                         status="*")
            answers.append((response.status_int, response.json.get("number")))
        return answers

    answers = [answer for result in run_together(THREADS, work) for answer in result]
    assert Counter(status for status, _ in answers) == {201: REPORTS}
    numbers = sorted(number for _, number in answers)
    assert numbers == list(range(1, REPORTS + 1))
    assert live.numbers() == list(range(1, REPORTS + 1))
    assert live.scalar("SELECT last_number FROM incident_counters") == REPORTS
    # Every answer was the incident that holds that number.
    listed = live.owner.get(f"{INCIDENTS}?pageSize=100").json
    assert listed["total"] == REPORTS
    assert [i["number"] for i in listed["items"]] == list(range(REPORTS, REPORTS - 100, -1))
    # And the next report continues the sequence.
    after = live.owner.post_json(INCIDENTS, report_body(live.site_id), status=201).json
    assert after["number"] == REPORTS + 1


def test_concurrent_retries_with_one_client_id_create_one_incident(live):
    clients = [live.signed_in() for _ in range(SAME_KEY_REQUESTS)]
    for round_ in range(1, ROUNDS + 1):
        key = str(uuid.uuid4())
        body = report_body(live.site_id, clientId=key, title=f"Retried report {round_}")

        def work(index: int, barrier: threading.Barrier, body: dict = body) -> tuple[int, int]:
            barrier.wait()
            response = clients[index].post_json(INCIDENTS, body, status="*")
            return response.status_int, response.json.get("number")

        answers = run_together(SAME_KEY_REQUESTS, work)
        assert Counter(status for status, _ in answers) == {201: 1, 200: SAME_KEY_REQUESTS - 1}, answers
        assert {number for _, number in answers} == {round_}
        assert live.scalar("SELECT count(*) FROM incidents WHERE client_id = :key", key=key) == 1
    # No number was taken and lost by the losing requests.
    assert live.numbers() == list(range(1, ROUNDS + 1))
    assert live.scalar("SELECT last_number FROM incident_counters") == ROUNDS


def test_word_counts_stay_exact_under_concurrent_reports_and_edits(live):
    """The search's word counts (migration 0013_search_word_counts) move in
    the transaction of each change, under concurrent reports and edits of
    the same incidents from several connections: afterwards every count is
    what counting the incidents' words gives, and the searches that rely on
    them answer what the texts say."""
    texts = ["Forklift reversing at dock", "Hydraulic hose burst at dock", "Forklift hydraulic leak",
             "Wet floor near the forklift charger", "Ladder without feet"]
    edited = [live.owner.post_json(INCIDENTS, report_body(live.site_id, title=text)).json["number"]
              for text in texts]
    clients = [live.signed_in() for _ in range(THREADS)]

    def work(index: int, barrier: threading.Barrier) -> list[int]:
        browser = clients[index]
        barrier.wait()
        statuses = []
        for n in range(12):
            text = texts[(index + n) % len(texts)]
            if index % 2:
                response = browser.post_json(INCIDENTS, report_body(live.site_id, title=text,
                                                                    description=texts[n % len(texts)]),
                                             status="*")
            else:  # the same few incidents, edited by four connections at once
                response = browser.patch_json(f"{INCIDENTS}/{edited[(index // 2 + n) % len(edited)]}",
                                              {"title": text, "description": texts[(n + 2) % len(texts)]},
                                              status="*")
            statuses.append(response.status_int)
        return statuses

    statuses = Counter(status for result in run_together(THREADS, work) for status in result)
    assert statuses == {201: 48, 200: 48}
    with live.engine.connect() as connection:
        assert connection.execute(sa.text(WORD_COUNT_DRIFT)).all() == []
    for word in ("forklift", "hydraulic", "dock", "feet"):
        matching = live.scalar("SELECT count(*) FROM incidents WHERE title ILIKE :q OR description ILIKE :q",
                               q=f"%{word}%")
        body = live.owner.get(f"{INCIDENTS}?q={word}&pageSize=100").json
        assert (body["total"], len(body["items"])) == (matching, matching), word


def test_a_report_takes_its_number_in_the_transaction_that_files_it(live):
    """With real commits (no test savepoints), the statement that takes the
    number runs before COMMIT, in the filing transaction; the answer and
    the audit entry name it, and numbers go on without a gap (issue 35: a
    number given in COMMIT and read back afterwards was null after a
    PostgreSQL restart)."""
    sent: list[str] = []

    def record(_conn: Any, _cursor: Any, statement: str, *_: Any) -> None:
        sent.append(statement)

    first = live.owner.post_json(INCIDENTS, report_body(live.site_id), status=201).json
    sa.event.listen(live.engine, "before_cursor_execute", record)
    try:
        second = live.owner.post_json(INCIDENTS, report_body(live.site_id, severity="critical"),
                                      status=201).json
    finally:
        sa.event.remove(live.engine, "before_cursor_execute", record)
    assert (first["number"], first["reference"]) == (1, "INC-0001")
    assert (second["number"], second["reference"]) == (2, "INC-0002")
    assert [s for s in sent if "incident_counters" in s], sent
    assert live.numbers() == [1, 2]
    assert live.owner.get(f"{INCIDENTS}/2").json == second
    assert live.scalar("SELECT count(*) FROM pg_trigger WHERE tgname = 'incidents_number_at_commit'") == 0
