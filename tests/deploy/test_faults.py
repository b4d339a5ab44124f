"""One part fails at a time while high-severity reports are filed (issue 35,
"Nothing lost when a part fails"): the service as production runs it
(`pserve production.ini`: gunicorn with several workers, `ehs worker`), on a
PostgreSQL and a Redis of its own started here on free ports, mail going to
a real SMTP server. After each fault every notice is delivered (at least
once; a repeat only after a worker was killed, and recognisable by its
Message-ID), every answer carries its number, and no 500 was served.

Skipped only when the PostgreSQL server binaries or redis-server are not
installed."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from collections import Counter, defaultdict
from pathlib import Path

import pytest

from ehs_core.testing import PASSWORD, SMTPServer, free_port

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
PG_BIN = Path(os.environ.get("EHS_TEST_PG_BIN", "/usr/lib/postgresql/15/bin"))
REDIS_SERVER = shutil.which("redis-server")

pytestmark = [
    pytest.mark.skipif(not (PG_BIN / "initdb").exists(), reason=f"no PostgreSQL server binaries in {PG_BIN}"),
    pytest.mark.skipif(REDIS_SERVER is None, reason="redis-server is not installed"),
]


def as_postgres(command: list[str]) -> list[str]:
    """initdb and postgres refuse to run as root: run them as `postgres`."""
    return ["runuser", "-u", "postgres", "--", *command] if os.geteuid() == 0 else command


class OwnPostgres:
    def __init__(self) -> None:
        self.dir = Path(tempfile.mkdtemp(prefix="ehs-faults-pg-"))
        if os.geteuid() == 0:
            shutil.chown(self.dir, "postgres", "postgres")
        self.data = self.dir / "data"
        self.port = free_port()
        subprocess.run(as_postgres([str(PG_BIN / "initdb"), "-D", str(self.data), "-A", "trust", "-U",
                                    "postgres", "--no-sync"]), check=True, capture_output=True)
        self.start()
        try:
            self._create()
        except BaseException:
            self.stop()
            raise

    def _create(self) -> None:
        self.ctl("-w", "-t", "30", "status")
        subprocess.run(as_postgres([str(PG_BIN / "createdb"), "-h", "127.0.0.1", "-p", str(self.port),
                                    "-U", "postgres", "ehs"]), check=True, capture_output=True)
        self.url = f"postgresql+psycopg://postgres@127.0.0.1:{self.port}/ehs"

    def ctl(self, *args: str) -> None:
        subprocess.run(as_postgres([str(PG_BIN / "pg_ctl"), "-D", str(self.data), *args]), check=True,
                       capture_output=True, timeout=60)

    def start(self) -> None:
        options = f"-p {self.port} -k {self.dir} -c listen_addresses=127.0.0.1 -c fsync=off"
        self.ctl("-w", "-t", "30", "-l", str(self.dir / "log"), "-o", options, "start")

    def restart(self) -> None:
        self.ctl("-w", "-t", "30", "-m", "fast", "stop")
        self.start()

    def stop(self) -> None:
        try:
            self.ctl("-w", "-t", "30", "-m", "immediate", "stop")
        finally:
            shutil.rmtree(self.dir, ignore_errors=True)


class OwnRedis:
    def __init__(self) -> None:
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.process: subprocess.Popen | None = None
        self.start()

    def start(self) -> None:
        self.process = subprocess.Popen([REDIS_SERVER, "--port", str(self.port), "--bind", "127.0.0.1",
                                         "--save", "", "--appendonly", "no"],
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(0.3)

    def stop(self) -> None:
        if self.process is not None:
            self.process.kill()
            self.process.wait(10)
            self.process = None


class Service:
    """pserve production.ini and `ehs worker` on the own PostgreSQL and Redis."""

    def __init__(self, pg: OwnPostgres, redis: OwnRedis, smtp: SMTPServer, workdir: Path) -> None:
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("EHS_")} | {
            "EHS_DATABASE_URL": pg.url, "EHS_HUEY_URL": redis.url, "EHS_PUBLIC_URL": self.base,
            "EHS_SESSION_SECURE": "false", "EHS_SMTP_HOST": "127.0.0.1", "EHS_SMTP_PORT": str(smtp.port),
            "EHS_UPLOAD_DIR": str(workdir / "uploads"), "EHS_MAIL_RETRY_DELAY": "1",
            "EHS_JOB_LEASE": "3", "EHS_POOL_SIZE": "4"}
        self.workdir = workdir
        subprocess.run([str(BIN / "ehs"), "migrate", str(ROOT / "production.ini")], env=self.env, check=True,
                       capture_output=True, timeout=120)
        self.log = open(workdir / "server.log", "w")  # open for the server's lifetime
        self.server = subprocess.Popen([str(BIN / "pserve"), str(ROOT / "production.ini"),
                                        f"http_port={self.port}"], env=self.env, stdout=self.log,
                                       stderr=subprocess.STDOUT)
        self.workers: list[subprocess.Popen] = []
        try:
            self._set_up()
        except BaseException:
            self.close()  # never leave the server behind
            raise

    def _set_up(self) -> None:
        for _ in range(150):
            try:
                if self.request("GET", "/api/health")[0] == 200:
                    break
            except OSError:
                pass
            time.sleep(0.2)
        status, body, headers = self.request("POST", "/api/setup", {
            "organizationName": "Fault Co", "name": "Root", "email": "root@faults.example",
            "password": PASSWORD})
        assert status == 201, body
        self.cookie = headers["Set-Cookie"].split("service_session=", 1)[1].split(";", 1)[0]
        self.site = self.request("POST", "/api/sites", {"name": "Plant"}, self.cookie)[1]["id"]
        self.start_worker()

    def start_worker(self) -> subprocess.Popen:
        """Start `ehs worker` and wait until it runs (its threads started)."""
        log_path = self.workdir / f"worker-{len(self.workers)}.log"
        with open(log_path, "w") as log:
            worker = subprocess.Popen([str(BIN / "ehs"), "worker", str(ROOT / "production.ini"),
                                       "--workers", "2"], env=self.env, stdout=log, stderr=subprocess.STDOUT)
        self.workers.append(worker)
        deadline = time.monotonic() + 60
        while "ehs worker:" not in log_path.read_text() and time.monotonic() < deadline:
            assert worker.poll() is None, log_path.read_text()[-2000:]
            time.sleep(0.1)
        return worker

    def ensure_worker(self) -> None:
        if not any(worker.poll() is None for worker in self.workers):
            self.start_worker()

    def request(self, method: str, path: str, body: dict | None = None,
                cookie: str | None = None) -> tuple[int, dict | None, dict]:
        data = json.dumps(body).encode() if body is not None else None
        headers = {"Origin": self.base}
        if data is not None:
            headers["Content-Type"] = "application/json"
        if cookie:
            headers["Cookie"] = f"service_session={cookie}"
        req = urllib.request.Request(self.base + path, data=data, headers=headers, method=method)
        try:
            with urllib.request.urlopen(req, timeout=30) as response:
                raw, status, head = response.read(), response.status, dict(response.headers)
        except urllib.error.HTTPError as error:
            raw, status, head = error.read(), error.code, dict(error.headers)
        try:
            parsed = json.loads(raw) if raw else None
        except ValueError:
            parsed = {"raw": raw[:200].decode(errors="replace")}
        return status, parsed, head

    def file(self) -> tuple[int, dict | None]:
        status, body, _ = self.request("POST", "/api/incidents", {
            "title": "Pressure vessel alarm", "type": "hazard", "severity": "high",
            "occurredAt": "2026-01-05T08:00:00Z", "siteId": self.site}, self.cookie)
        return status, body

    def close(self) -> None:
        for process in [*self.workers, self.server]:
            if process.poll() is None:
                process.terminate()
                try:
                    process.wait(30)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait(10)
        self.log.close()


@pytest.fixture(scope="module")
def parts(tmp_path_factory):
    smtp = SMTPServer()
    smtp.start()
    pg = redis = service = None
    try:
        pg = OwnPostgres()
        redis = OwnRedis()
        service = Service(pg, redis, smtp, tmp_path_factory.mktemp("faults"))
        yield service, pg, redis, smtp
    finally:
        if service is not None:
            service.close()
        if redis is not None:
            redis.stop()
        if pg is not None:
            pg.stop()
        smtp.stop()


class Load:
    """Threads filing high-severity reports until stopped."""

    def __init__(self, service: Service, threads: int = 3) -> None:
        self.service = service
        self.answers: list[tuple[int, dict | None]] = []
        self.stopping = threading.Event()
        self.threads = [threading.Thread(target=self._run) for _ in range(threads)]

    def _run(self) -> None:
        while not self.stopping.is_set():
            try:
                self.answers.append(self.service.file())
            except OSError:
                self.answers.append((0, None))
            time.sleep(0.05)

    def __enter__(self) -> Load:
        for thread in self.threads:
            thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stopping.set()
        for thread in self.threads:
            thread.join(60)


def check_answers(answers: list[tuple[int, dict | None]], service: Service) -> list[str]:
    """No 500, every 201 with its number; returns the references filed."""
    statuses = Counter(status for status, _ in answers)
    assert 500 not in statuses and 0 not in statuses, (statuses, server_errors(service))
    filed = [body for status, body in answers if status == 201]
    assert filed and all(isinstance(body["number"], int) for body in filed), statuses
    assert all(body["reference"] == f"INC-{body['number']:04d}" for body in filed)
    return [body["reference"] for body in filed]


def server_errors(service: Service) -> list[str]:
    lines = (service.workdir / "server.log").read_text().splitlines()
    return [line[:600] for line in lines if '"ERROR"' in line or "Traceback" in line][:3]


def notices(smtp: SMTPServer) -> dict[str, set[str]]:
    """Message-IDs of the notices received, by the reference they name."""
    found: dict[str, set[str]] = defaultdict(set)
    with smtp.inbox.lock:
        messages = list(smtp.inbox.messages)
    for message in messages:
        subject = " ".join(str(message["Subject"]).split())
        if "reported:" in subject:
            found[subject.split()[1]].add(message["Message-ID"])
    return found


def wait_for_notices(smtp: SMTPServer, references: list[str], timeout: float = 60) -> dict[str, set[str]]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = notices(smtp)
        if set(references) <= set(found):
            return found
        time.sleep(0.2)
    missing = sorted(set(references) - set(notices(smtp)))
    raise AssertionError(f"{len(missing)} notice(s) never arrived: {missing[:10]}")


def count_per_reference(smtp: SMTPServer) -> Counter:
    with smtp.inbox.lock:
        subjects = [" ".join(str(m["Subject"]).split()) for m in smtp.inbox.messages]
    return Counter(subject.split()[1] for subject in subjects if "reported:" in subject)


def test_redis_stopped_for_a_while_loses_no_notice(parts):
    service, _pg, redis, smtp = parts
    service.ensure_worker()
    smtp.inbox.clear()
    with Load(service) as load:
        time.sleep(1)
        redis.stop()
        time.sleep(4)
        redis.start()
        time.sleep(1)
    references = check_answers(load.answers, service)
    found = wait_for_notices(smtp, references)
    # Nothing was killed: each notice exactly once, under one Message-ID.
    assert all(len(found[reference]) == 1 for reference in references)
    counts = count_per_reference(smtp)
    assert all(counts[reference] == 1 for reference in references), counts.most_common(3)


def test_the_worker_killed_and_stopped_mid_send_loses_no_notice(parts):
    service, _pg, _redis, smtp = parts
    smtp.inbox.clear()
    smtp.inbox.delay = 0.3  # each mail takes a while: a signal lands mid-send
    try:
        with Load(service) as load:
            time.sleep(1.5)
            killed = service.workers[-1]
            killed.send_signal(signal.SIGKILL)
            killed.wait(10)
            service.start_worker()
            time.sleep(1.5)  # sending again
            stopped = service.workers[-1]
            started = time.monotonic()
            stopped.send_signal(signal.SIGTERM)
            assert stopped.wait(30) == 0  # it finished the mail in hand, then exited
            assert time.monotonic() - started < 15
            service.start_worker()
            time.sleep(1)
    finally:
        smtp.inbox.delay = 0
    references = check_answers(load.answers, service)
    found = wait_for_notices(smtp, references)
    # At least once; a mail sent twice (only the one the killed worker held)
    # is the same message: one Message-ID per notice.
    assert all(len(found[reference]) == 1 for reference in references), [
        (reference, ids) for reference, ids in found.items() if len(ids) > 1]
    counts = count_per_reference(smtp)
    assert sum(counts.values()) - len(references) <= 2, counts.most_common(3)


def test_postgresql_restarted_then_sixteen_reports_at_once_all_numbered_and_notified(parts):
    service, pg, _redis, smtp = parts
    service.ensure_worker()
    smtp.inbox.clear()
    before = service.request("GET", "/api/incidents?pageSize=1", cookie=service.cookie)[1]["total"]
    pg.restart()
    barrier = threading.Barrier(16)
    answers: list = [None] * 16

    def one(index: int) -> None:
        barrier.wait()
        answers[index] = service.file()

    threads = [threading.Thread(target=one, args=(i,)) for i in range(16)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert [status for status, _ in answers] == [201] * 16, (answers, server_errors(service))
    references = check_answers(answers, service)
    assert sorted(body["number"] for _, body in answers) == list(range(before + 1, before + 17))
    found = wait_for_notices(smtp, references)
    assert all(len(found[reference]) == 1 for reference in references)
