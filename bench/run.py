"""The benchmark: `python -m bench` (see bench/README.md).

For each size it creates a fresh PostgreSQL database, migrates it with
`ehs migrate`, seeds it with `ehs seed`, serves the service under gunicorn
(production.ini, settings from EHS_* variables) and a bare Pyramid app under
the same gunicorn settings, drives both with wrk from its own process over
loopback (bounded in time and request count), measures the CSV export's time
and the serving worker's peak memory growth through /proc, and writes the
figures of every size side by side to bench/results.md (and results.json).
"""

from __future__ import annotations

import argparse
import datetime as dt
import http.client
import json
import os
import platform
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import make_url

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
BIN = Path(sys.executable).parent
INI = ROOT / "production.ini"
LUA = HERE / "scenario.lua"
PASSWORD = "bench password 2026"  # noqa: S105 (throwaway users in a throwaway local database)
ADMIN = "admin1@seed.example"
SUPERVISOR = "supervisor1@seed.example"
SAFETY_MANAGER = "safetymanager1@seed.example"
REPORTER = "reporter1@seed.example"
LATEST = HERE / "results-latest.json"
SEARCHES = ("forklift", "hydraulic")  # a common and a rare word of the seeded texts
WORKER_CLASS = "ehs_core.buffering.BufferingWorker"  # production.ini's worker_class
HUEY_KEYS = ("huey.redis.ehs", "huey.schedule.ehs", "huey.results.ehs")


def log(message: str) -> None:
    print(f"[bench {time.strftime('%H:%M:%S')}] {message}", flush=True)


# --- processes -------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def run(cmd: list[str], env: dict[str, str], logfile: Path, timeout: float) -> float:
    """Run a command to completion (output to `logfile`); returns seconds taken."""
    started = time.monotonic()
    with logfile.open("a") as out:
        out.write(f"$ {' '.join(cmd)}\n")
        out.flush()
        done = subprocess.run(cmd, env=env, stdout=out, stderr=subprocess.STDOUT, cwd=ROOT,  # noqa: S603
                              timeout=timeout, check=False)
    if done.returncode != 0:
        raise SystemExit(f"bench: {' '.join(cmd[:2])} failed (exit {done.returncode}); see {logfile}")
    return time.monotonic() - started


@dataclass
class Server:
    """A gunicorn arbiter and its workers."""

    name: str
    cmd: list[str]
    env: dict[str, str]
    logfile: Path
    port: int
    health: str
    workers: int
    process: subprocess.Popen | None = None

    def start(self) -> None:
        out = self.logfile.open("a")
        self.process = subprocess.Popen(self.cmd, env=self.env, stdout=out,  # noqa: S603
                                        stderr=subprocess.STDOUT, cwd=ROOT, start_new_session=True)

    def worker_pids(self) -> list[int]:
        assert self.process is not None
        path = Path(f"/proc/{self.process.pid}/task/{self.process.pid}/children")
        with suppress(OSError):
            return [int(pid) for pid in path.read_text().split()]
        return []

    def wait_ready(self, timeout: float = 90) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            assert self.process is not None
            if self.process.poll() is not None:
                raise SystemExit(f"bench: {self.name} exited; see {self.logfile}")
            with suppress(OSError, http.client.HTTPException):
                status, _, _ = request(self.port, "GET", self.health)
                if status == 200 and len(self.worker_pids()) == self.workers:
                    return
            time.sleep(0.3)
        raise SystemExit(f"bench: {self.name} did not become ready; see {self.logfile}")

    def stop(self) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=10)


def request(port: int, method: str, path: str, body: Any = None, cookie: str | None = None,
            origin: str | None = None) -> tuple[int, dict[str, str], bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    headers = {"Accept": "application/json"}
    payload = None
    if body is not None:
        payload = json.dumps(body).encode()
        headers["Content-Type"] = "application/json"
    if cookie:
        headers["Cookie"] = f"service_session={cookie}"
    if origin:
        headers["Origin"] = origin
    try:
        conn.request(method, path, body=payload, headers=headers)
        response = conn.getresponse()
        data = response.read()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, data
    finally:
        conn.close()


def login(port: int, origin: str, email: str) -> str:
    status, headers, body = request(port, "POST", "/api/auth/login", {"email": email, "password": PASSWORD},
                                    origin=origin)
    match = re.search(r"service_session=([^;]+)", headers.get("set-cookie", ""))
    if status != 200 or not match:
        raise SystemExit(f"bench: sign-in as {email} failed ({status}): {body[:200]!r}")
    return match.group(1)


# --- /proc ------------------------------------------------------------------------------


def proc_status(pid: int, key: str) -> int:
    """A /proc/PID/status field (VmRSS, VmHWM) in bytes."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1]) * 1024
    raise KeyError(key)


def reset_peak(pid: int) -> None:
    """Reset VmHWM to the current RSS (Linux: write 5 to clear_refs)."""
    Path(f"/proc/{pid}/clear_refs").write_text("5")


# --- wrk ---------------------------------------------------------------------------------


@dataclass
class Scenario:
    key: str
    label: str
    mode: str
    params: list[str]
    target: str = "service"  # or "bare"
    user: str = "admin"
    heavy: bool = False  # slow endpoint: longer latency runs
    extra: dict[str, Any] = field(default_factory=dict)


RUNS = iter(range(1, 2**20))


def wrk(port: int, scenario: Scenario, connections: int, cookie: str, origin: str,
        duration: float) -> dict[str, Any]:
    """One wrk run (bounded by `duration`); its figures."""
    threads = min(2, connections)
    params = list(scenario.params)
    if scenario.mode == "create":
        params.append(str(next(RUNS) + int(time.time()) % 100_000 * 1000))  # fresh clientIds
    elif scenario.mode == "transition":
        write_closed(scenario.extra["url"], Path(params[0]))  # still closed: not reopened by a run before
    cmd = ["wrk", f"-t{threads}", f"-c{connections}", f"-d{duration:g}s", "--timeout", "30s",
           "-s", str(LUA), f"http://127.0.0.1:{port}", "--", scenario.mode, cookie or "-", origin,
           str(threads), *params]
    load = float(Path("/proc/loadavg").read_text().split()[0])
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=duration + 90, check=False)  # noqa: S603
    line = next((ln for ln in done.stdout.splitlines() if ln.startswith("BENCH_JSON ")), None)
    if done.returncode != 0 or line is None:
        raise SystemExit(f"bench: wrk failed for {scenario.key}: {done.stdout}\n{done.stderr}")
    raw = json.loads(line.removeprefix("BENCH_JSON "))
    # Requests still in flight when wrk stopped (up to one per connection, queued
    # on the workers) must finish before the next run.
    time.sleep(min(30.0, max(1.0, 2.5 * raw["max_us"] / 1e6)) if raw["requests"] else 30.0)
    seconds = raw["duration_us"] / 1e6
    ok = sum(count for status, count in raw["statuses"].items() if status.startswith("2"))
    return {"connections": connections, "requests": raw["requests"], "ok": ok, "seconds": round(seconds, 2),
            "rps": round(raw["requests"] / seconds, 1) if seconds else 0.0,
            "p50_ms": raw["p50_us"] / 1000, "p95_ms": raw["p95_us"] / 1000, "p99_ms": raw["p99_us"] / 1000,
            "max_ms": raw["max_us"] / 1000, "statuses": raw["statuses"], "errors": raw["errors"],
            "loadavg_before": load}


def summarize(scenario: Scenario, loaded: list[dict[str, Any]],
              single: list[dict[str, Any]]) -> dict[str, Any]:
    """Medians over the rounds: throughput from the loaded runs, latency from
    the 1-connection runs (and under load, for reference)."""
    def median(runs: list[dict[str, Any]], key: str) -> float | None:
        values = [run[key] for run in runs if run["requests"]]  # a run that completed nothing has no figures
        return round(statistics.median(values), 3) if values else None

    failed = sum(run["requests"] - run["ok"] + sum(v for k, v in run["errors"].items() if k != "status")
                 for run in loaded + single)
    statuses: dict[str, int] = {}
    for run in loaded + single:
        for status, count in run["statuses"].items():
            statuses[status] = statuses.get(status, 0) + count
    return {"label": scenario.label, "rps": median(loaded, "rps"), "p50_ms": median(single, "p50_ms"),
            "p95_ms": median(single, "p95_ms"), "rps_1": median(single, "rps"),
            "loaded_p50_ms": median(loaded, "p50_ms"), "loaded_p95_ms": median(loaded, "p95_ms"),
            "requests": sum(run["requests"] for run in loaded + single), "failed": failed,
            "statuses": statuses, "rounds": {"loaded": loaded, "single": single}}


# --- the run -----------------------------------------------------------------------------


@dataclass
class Options:
    sizes: list[int]
    years: float
    sites: int
    workers: int
    connections: int
    rounds: int
    duration: float
    latency_duration: float
    heavy_duration: float
    warmup: float
    export_runs: int
    postgres_url: str
    redis_url: str
    output: Path
    baseline: Path | None
    keep: bool
    seed: int
    label: str
    only: set[str]
    database: str = "ehs_bench_{size}"
    reuse: bool = False
    seed_timeout: float = 1800
    pdf_runs: int = 3
    pairs: int = 0
    threads: int = 4


def database_urls(options: Options, name: str) -> tuple[sa.URL, sa.URL]:
    server = make_url(options.postgres_url).set(drivername="postgresql+psycopg")
    return server, server.set(database=name)


def database_exists(options: Options, name: str) -> bool:
    server, _ = database_urls(options, name)
    admin = sa.create_engine(server, isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as conn:
            return conn.exec_driver_sql("SELECT 1 FROM pg_database WHERE datname = %(name)s",
                                        {"name": name}).first() is not None
    finally:
        admin.dispose()


@contextmanager
def fresh_database(options: Options, name: str, reuse: bool = False) -> Iterator[str]:
    """A new database, or with `reuse` the one kept by an earlier run."""
    server, url = database_urls(options, name)
    admin = sa.create_engine(server, isolation_level="AUTOCOMMIT")
    if not reuse:
        with admin.connect() as conn:
            conn.exec_driver_sql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
            conn.exec_driver_sql(f'CREATE DATABASE "{name}"')
    try:
        yield url.render_as_string(hide_password=False)
    finally:
        if not options.keep and not reuse:
            with admin.connect() as conn:
                conn.exec_driver_sql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        admin.dispose()


def clear_queue(redis_url: str) -> None:
    """Drop the mail jobs the service queued (nothing consumes them here)."""
    import redis

    client = redis.Redis.from_url(redis_url)
    try:
        client.delete(*HUEY_KEYS)
    finally:
        client.close()


def three_years_before(day: dt.date) -> dt.date:
    """The first day of the longest period ending `day` the analytics accept (under 3 years)."""
    try:
        start = day.replace(year=day.year - 3)
    except ValueError:
        start = dt.date(day.year - 3, 3, 1)
    return start + dt.timedelta(days=1)


def write_closed(url: str, path: Path) -> int:
    """The numbers of closed incidents, in a fixed shuffled order, one a line."""
    engine = sa.create_engine(url)
    try:
        with engine.connect() as conn:
            closed = conn.execute(sa.text("SELECT number FROM incidents WHERE status = 'closed' "
                                          "ORDER BY md5(number::text)")).scalars().all()
    finally:
        engine.dispose()
    path.write_text("\n".join(map(str, closed)) + "\n")
    return len(closed)


def facts(url: str, workdir: Path) -> dict[str, Any]:
    """What the scenarios need from the seeded data."""
    engine = sa.create_engine(url)
    today = dt.date.today()
    year = today.year - 1
    bounds = {"a": dt.datetime(year, 1, 1, tzinfo=dt.UTC), "b": dt.datetime(year + 1, 1, 1, tzinfo=dt.UTC)}
    try:
        with engine.connect() as conn:
            site_id = conn.execute(sa.text(
                "SELECT site_id FROM incidents WHERE occurred_at >= :a AND occurred_at < :b "
                "GROUP BY site_id ORDER BY count(*) DESC, site_id LIMIT 1"), bounds).scalar()
            total = conn.execute(sa.text("SELECT count(*) FROM incidents")).scalar()
            cases = conn.execute(sa.text(
                "SELECT count(*) FROM osha_cases c JOIN incidents i ON i.id = c.incident_id "
                "WHERE c.recordable AND i.site_id = :s AND i.occurred_at >= :a AND i.occurred_at < :b"),
                {"s": site_id, **bounds}).scalar()
            case_id = conn.execute(sa.text(
                "SELECT c.id FROM osha_cases c JOIN incidents i ON i.id = c.incident_id "
                "WHERE c.recordable AND i.site_id = :s AND i.occurred_at >= :a AND i.occurred_at < :b "
                "ORDER BY c.id LIMIT 1"), {"s": site_id, **bounds}).scalar()
            matches = {term: conn.execute(sa.text(
                "SELECT count(*) FROM incidents WHERE lower(title) LIKE :p OR lower(description) LIKE :p "
                "OR lower(location_detail) LIKE :p"), {"p": f"%{term}%"}).scalar() for term in SEARCHES}
    finally:
        engine.dispose()
    closed_file = workdir / "closed.txt"
    closed = write_closed(url, closed_file)
    occurred = (dt.datetime.now(dt.UTC) - dt.timedelta(hours=1)).replace(microsecond=0)
    return {"site_id": site_id, "year": year, "closed_file": str(closed_file), "closed": closed,
            "total": total, "today": today, "occurred_at": occurred.isoformat(), "log_cases": cases,
            "search_matches": matches, "url": url, "case_id": case_id}


def scenarios(f: dict[str, Any]) -> list[Scenario]:
    today = f["today"]
    analytics = f"/api/stats/analytics?from={three_years_before(today).isoformat()}&to={today.isoformat()}"
    common, rare = SEARCHES
    return [
        Scenario("bare", "bare Pyramid view (the ceiling)", "get", ["/"], target="bare"),
        Scenario("me", "signed-in floor: GET /api/auth/me", "get", ["/api/auth/me"]),
        Scenario("list", "list, default page", "get", ["/api/incidents"]),
        Scenario("list_filtered", "list filtered by type and site", "get",
                 [f"/api/incidents?type=injury&siteId={f['site_id']}"]),
        Scenario("list_q", f"list q={common} (a common word)", "get", [f"/api/incidents?q={common}"]),
        Scenario("list_q_rare", f"list q={rare} (a rarer word)", "get", [f"/api/incidents?q={rare}"]),
        Scenario("detail", "detail of a random incident", "detail", [str(f["total"])]),
        # The pages people open.
        Scenario("home_page", "home page (HTML): what waits for the person", "get", ["/"]),
        Scenario("list_page", "incident list page (HTML), default page", "get", ["/incidents"]),
        Scenario("list_filtered_page", "incident list page (HTML) filtered by type and site", "get",
                 [f"/incidents?type=injury&siteId={f['site_id']}"]),
        Scenario("detail_page", "incident page (HTML) of a random incident", "detail_page",
                 [str(f["total"])]),
        Scenario("create", "create", "create", [str(f["site_id"]), f["occurred_at"]]),
        Scenario("update", "update (PATCH title)", "update", [str(f["total"])]),
        Scenario("transition", "transition (reopen a closed incident)", "transition", [f["closed_file"]],
                 extra={"url": f["url"]}),
        Scenario("actions", "actions list: mine, open (a supervisor)", "get",
                 ["/api/actions?scope=mine&filter=open"], user="supervisor"),
        Scenario("overview", "stats overview", "get", ["/api/stats/overview"], heavy=True),
        Scenario("analytics", "stats analytics over 3 years", "get", [analytics], heavy=True),
        Scenario("osha_log", "OSHA log of a site-year", "get",
                 [f"/api/osha/log?siteId={f['site_id']}&year={f['year']}"], heavy=True),
        # Web app III: the analytics dashboard (default period). The 300 Log of the site-year as a PDF
        # is made by a job: measured end to end by `measure_pdf_job` (key "osha_log_pdf").
        Scenario("dashboard_page", "analytics dashboard page (HTML, SVG charts)", "get", ["/analytics"],
                 heavy=True),
        Scenario("osha_log_page", "injury log page (HTML) of a site-year", "get",
                 [f"/osha/log?siteId={f['site_id']}&year={f['year']}"], heavy=True),
        # Issue #42 item 1: every other page and file a person opens or downloads.
        Scenario("home_safety_manager", "home page of a safety manager", "get", ["/"],
                 user="safety_manager"),
        Scenario("home_supervisor", "home page of a supervisor", "get", ["/"], user="supervisor"),
        Scenario("home_reporter", "home page of a reporter", "get", ["/"], user="reporter"),
        Scenario("list_searched_page", f"incident list page (HTML) searched for {common}", "get",
                 [f"/incidents?q={common}"]),
        Scenario("actions_page", "actions page: mine, open (a supervisor)", "get", ["/actions"],
                 user="supervisor"),
        Scenario("actions_all_page", "actions page: all, open", "get", ["/actions?scope=all&filter=open"]),
        Scenario("actions_overdue_page", "actions page: all, overdue", "get",
                 ["/actions?scope=all&filter=overdue"]),
        Scenario("actions_verify_page", "actions page: all, awaiting verification", "get",
                 ["/actions?scope=all&filter=awaiting_verification"]),
        Scenario("osha_summary_page", "300A summary page (HTML) of a site-year", "get",
                 [f"/osha/summary?siteId={f['site_id']}&year={f['year']}"], heavy=True),
        Scenario("osha_301_page", "Form 301 of a case (print page)", "get",
                 [f"/osha/cases/{f['case_id']}/301"], heavy=True),
        Scenario("ita_page", "ITA submission page of a year", "get", [f"/osha/submission?year={f['year']}"],
                 heavy=True),
        Scenario("ita_summary_csv", "ITA summary CSV of a year", "get",
                 [f"/api/osha/ita/summary.csv?year={f['year']}"], heavy=True),
        Scenario("ita_cases_csv", "ITA case CSV of a year", "get",
                 [f"/api/osha/ita/cases.csv?year={f['year']}"], heavy=True),
        Scenario("osha_summary_pdf", "300A PDF of a site-year (made in the request)", "get",
                 [f"/osha/summary.pdf?siteId={f['site_id']}&year={f['year']}"], heavy=True),
    ]


def measure_export(server: Server, cookie: str, runs: int) -> dict[str, Any]:
    """Sequential exports of 10,000 rows: time, and the serving worker's peak
    RSS growth (VmHWM after, minus VmRSS before, with the peak reset first)."""
    times, peaks, retained, rows, sizes = [], [], [], [], []
    for _ in range(runs):
        pids = server.worker_pids()
        before = {pid: proc_status(pid, "VmRSS") for pid in pids}
        for pid in pids:
            reset_peak(pid)
        started = time.perf_counter()
        status, _, body = request(server.port, "GET", "/api/incidents/export", cookie=cookie)
        times.append(time.perf_counter() - started)
        if status != 200:
            raise SystemExit(f"bench: export answered {status}")
        growth = {pid: proc_status(pid, "VmHWM") - before[pid] for pid in pids}
        served = max(growth, key=growth.__getitem__)
        peaks.append(growth[served])
        retained.append(proc_status(served, "VmRSS") - before[served])
        rows.append(body.count(b"\r\n") - 1)
        sizes.append(len(body))
    times.sort()
    return {"runs": runs, "rows": max(rows), "bytes": max(sizes), "p50_s": statistics.median(times),
            "max_s": times[-1], "min_s": times[0], "peak_growth_mb": max(peaks) / 2**20,
            "peak_growth_median_mb": statistics.median(peaks) / 2**20,
            "retained_mb": statistics.median(retained) / 2**20}


def pdf_pages(body: bytes) -> int:
    """Pages of a PDF (the joined parts keep their page objects in
    compressed streams, where a regular expression finds none)."""
    import io

    from pypdf import PdfReader

    return len(PdfReader(io.BytesIO(body)).pages)


def measure_pdf_job(service: Server, worker: subprocess.Popen, cookie: str, origin: str, f: dict[str, Any],
                    runs: int) -> dict[str, Any]:
    """The 300 Log of the site-year as a PDF, made by the worker (`ehs worker`):
    ask for it (POST), follow its progress page's block until it is done,
    download it; time to the last byte, one request after the other, and the
    worker's peak RSS growth (VmHWM, reset before each)."""
    query = f"siteId={f['site_id']}&year={f['year']}"
    times, peaks, polls, sizes, pages, first = [], [], [], [], [], []
    for _ in range(runs):
        before = proc_status(worker.pid, "VmRSS")
        reset_peak(worker.pid)
        started = time.perf_counter()
        status, headers, _ = request(service.port, "POST", f"/osha/log.pdf?{query}", cookie=cookie,
                                     origin=origin)
        if status != 303:
            raise SystemExit(f"bench: asking for the 300 Log PDF answered {status}")
        job = headers["location"].split("://", 1)[-1].split("/", 1)[-1]
        count, seen = 0, None
        deadline = time.monotonic() + 900
        while True:
            status, _, body = request(service.port, "GET", f"/{job}/progress", cookie=cookie)
            count += 1
            state = re.search(rb'data-status="(\w+)"', body)
            if status != 200 or state is None or state.group(1) == b"failed":
                raise SystemExit(f"bench: the PDF job answered {status}: {body[:300]!r}")
            if seen is None and b"laid out" in body:
                seen = time.perf_counter() - started  # the first progress the worker reported
            if state.group(1) == b"done":
                break
            if time.monotonic() > deadline:
                raise SystemExit("bench: the PDF job did not finish in 15 minutes")
            time.sleep(0.25)
        status, headers, body = request(service.port, "GET", f"/{job}/file", cookie=cookie)
        times.append(time.perf_counter() - started)
        if status != 200 or not body.startswith(b"%PDF"):
            raise SystemExit(f"bench: the PDF download answered {status}")
        peaks.append(proc_status(worker.pid, "VmHWM") - before)
        polls.append(count)
        sizes.append(len(body))
        pages.append(pdf_pages(body))
        first.append(seen)
    return {"label": "300 Log of the site-year as a PDF (a job, end to end)", "runs": runs,
            "p50_s": statistics.median(times), "min_s": min(times), "max_s": max(times),
            "first_progress_s": statistics.median([s for s in first if s is not None] or [0]),
            "polls": statistics.median(polls), "bytes": max(sizes), "pages": max(pages),
            "peak_growth_mb": max(peaks) / 2**20, "cases": f["log_cases"]}


# --- a page and its JSON, in alternation ---------------------------------------------------

# Each page row's JSON row and the paths of both (an incident number: the same for both).
PAIRED = {"list_page": ("list", lambda n: "/api/incidents", lambda n: "/incidents"),
          "detail_page": ("detail", lambda n: f"/api/incidents/{n}", lambda n: f"/incidents/{n}")}


def timed_get(port: int, path: str, cookie: str, origin: str) -> tuple[int, float]:
    """One GET on a connection of its own (gunicorn's sync workers close
    each), timed as wrk times a request: from writing it to the last byte of
    the body its Content-Length announces. Its status, and milliseconds."""
    head = (f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nCookie: service_session={cookie}\r\n"
            f"Origin: {origin}\r\nAccept: application/json\r\n\r\n").encode()
    with socket.create_connection(("127.0.0.1", port), timeout=60) as sock:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        started = time.perf_counter()
        sock.sendall(head)
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = sock.recv(65536)
            if not chunk:
                raise SystemExit(f"bench: {path} closed before its headers")
            data += chunk
        headers, _, body = data.partition(b"\r\n\r\n")
        length = re.search(rb"(?im)^content-length:\s*(\d+)", headers)
        while length is None or len(body) < int(length.group(1)):
            chunk = sock.recv(65536)
            if not chunk:
                break
            body += chunk
        took = time.perf_counter() - started
    return int(headers.split(b" ", 2)[1]), took * 1000


def measure_paired(port: int, key: str, cookie: str, origin: str, pairs: int, total: int,
                   seed: int) -> dict[str, list[float]]:
    """`pairs` pairs of requests at 1 connection, each a page and its JSON
    (the same incident) in a random order: both meet the same moment of a
    machine whose speed drifts, which two wrk rows run seconds apart do not
    (on a 2-core machine the ratio of the two rows moved by 0.3 between
    runs of the same code)."""
    import random

    _, json_path, page_path = PAIRED[key]
    chance = random.Random(seed)
    times: dict[str, list[float]] = {"json": [], "page": []}
    for _ in range(pairs):
        number = chance.randint(1, total)
        order = [("json", json_path(number)), ("page", page_path(number))]
        chance.shuffle(order)
        for kind, path in order:
            status, took = timed_get(port, path, cookie, origin)
            if status != 200:
                raise SystemExit(f"bench: {path} answered {status} in the paired run")
            times[kind].append(took)
    return times


def paired_figures(times: dict[str, list[float]]) -> dict[str, Any]:
    json_p50, page_p50 = statistics.median(times["json"]), statistics.median(times["page"])
    return {"pairs": len(times["json"]), "json_p50_ms": round(json_p50, 3), "page_p50_ms": round(page_p50, 3),
            "ratio": round(page_p50 / json_p50, 3)}


def measure(options: Options, size: int, service: Server, bare: Server, cookies: dict[str, str],
            f: dict[str, Any]) -> dict[str, Any]:
    """Every scenario in interleaved rounds (so that a burst of load from
    elsewhere on the machine spoils one round, not one scenario)."""
    origin = f"http://127.0.0.1:{service.port}"
    plan = [s for s in scenarios(f) if not options.only or s.key in options.only or s.key == "bare"]
    loaded: dict[str, list[dict[str, Any]]] = {s.key: [] for s in plan}
    single: dict[str, list[dict[str, Any]]] = {s.key: [] for s in plan}
    paired: dict[str, dict[str, list[float]]] = {
        s.key: {"json": [], "page": []} for s in plan if s.key in PAIRED and options.pairs}
    for number in range(options.rounds):
        for scenario in plan:
            port = bare.port if scenario.target == "bare" else service.port
            cookie = cookies[scenario.user]
            if number == 0 and options.warmup:  # every worker warm (connections >= workers)
                wrk(port, scenario, max(options.connections, options.workers), cookie, origin, options.warmup)
            single_duration = options.heavy_duration if scenario.heavy else options.latency_duration
            loaded[scenario.key].append(wrk(port, scenario, options.connections, cookie, origin,
                                            options.duration))
            single[scenario.key].append(wrk(port, scenario, 1, cookie, origin, single_duration))
            a, b = loaded[scenario.key][-1], single[scenario.key][-1]
            log(f"size {size} round {number + 1}: {scenario.key:13} {a['rps']:8.1f} req/s "
                f"(p50 {a['p50_ms']:7.2f} ms at {options.connections})  1 conn: p50 {b['p50_ms']:8.2f} ms "
                f"p95 {b['p95_ms']:8.2f} ms  {dict(a['statuses'], **b['statuses'])}")
        for key in paired:
            times = measure_paired(service.port, key, cookies["admin"], origin, options.pairs, f["total"],
                                   options.seed + number)
            for kind, values in times.items():
                paired[key][kind] += values
            p = paired_figures(times)
            log(f"size {size} round {number + 1}: {key:13} paired with its JSON, {p['pairs']} pairs: "
                f"p50 {p['page_p50_ms']:.2f} ms against {p['json_p50_ms']:.2f} ms = {p['ratio']:.2f} x")
    figures = {s.key: summarize(s, loaded[s.key], single[s.key]) for s in plan}
    for key, times in paired.items():
        figures[key]["paired"] = paired_figures(times)
    return figures


def run_size(options: Options, size: int) -> dict[str, Any]:
    workdir = Path(tempfile.mkdtemp(prefix=f"ehs-bench-{size}-"))
    logfile = workdir / "bench.log"
    log(f"size {size}: work directory {workdir}")
    clear_queue(options.redis_url)
    result: dict[str, Any] = {"size": size}
    name = options.database.format(size=size)
    reuse = options.reuse and database_exists(options, name)
    with fresh_database(options, name, reuse) as url:
        port, bare_port = free_port(), free_port()
        origin = f"http://127.0.0.1:{port}"
        env = {name: value for name, value in os.environ.items()
               if not name.startswith("EHS_") and name != "MAX_UPLOAD_MB"}
        env.update({"EHS_DATABASE_URL": url, "EHS_PUBLIC_URL": origin, "EHS_HUEY_URL": options.redis_url,
                    "EHS_UPLOAD_DIR": str(workdir / "uploads"), "EHS_SESSION_SECURE": "false",
                    "EHS_SMTP_PORT": "1025", "EHS_AUTO_MIGRATE": "false"})
        (workdir / "uploads").mkdir()
        ehs = str(BIN / "ehs")
        result["migrate_s"] = run([ehs, "migrate", str(INI)], env, logfile, 300)
        if reuse:
            # Seeded by an earlier run (--keep): migrated to head, not seeded again.
            result["seed_s"] = None
            result["seed_rows"] = table_counts(url)
            log(f"size {size}: reusing {name} ({result['seed_rows']['incidents']:,} incidents)")
        else:
            log(f"size {size}: migrated in {result['migrate_s']:.1f}s; seeding")
            result["seed_s"] = run([ehs, "seed", str(INI), "--incidents", str(size),
                                    "--years", f"{options.years:g}", "--sites", str(options.sites),
                                    "--seed", str(options.seed), "--password", PASSWORD], env, logfile,
                                   options.seed_timeout)
            result["seed_rows"] = seed_counts(logfile)
            log(f"size {size}: seeded in {result['seed_s']:.1f}s")
        f = facts(url, workdir)
        result["facts"] = {k: (v.isoformat() if isinstance(v, dt.date) else v) for k, v in f.items()
                           if k not in ("closed_file", "url")}
        # The production server's worker class and threads (production.ini).
        flags = ["--workers", str(options.workers), "--threads", str(options.threads),
                 "--worker-class", WORKER_CLASS, "--timeout", "60", "--access-logfile", "/dev/null"]
        gunicorn = str(BIN / "gunicorn")
        service = Server("service", [gunicorn, "--paste", str(INI), "--bind", f"127.0.0.1:{port}", *flags],
                         env, workdir / "service.log", port, "/api/health", options.workers)
        bare = Server("bare", [gunicorn, "--bind", f"127.0.0.1:{bare_port}", *flags, "bench.bare:app"],
                      env, workdir / "bare.log", bare_port, "/", options.workers)
        try:
            service.start()
            bare.start()
            service.wait_ready()
            bare.wait_ready()
            cookies = {"admin": login(port, origin, ADMIN), "supervisor": login(port, origin, SUPERVISOR),
                       "safety_manager": login(port, origin, SAFETY_MANAGER),
                       "reporter": login(port, origin, REPORTER)}
            figures = measure(options, size, service, bare, cookies, f)
            # Each worker's peak RSS over the rows (VmHWM; the export below resets it to time its own).
            peaks = {pid: proc_status(pid, "VmHWM") for pid in service.worker_pids()}
            if not options.only or "export" in options.only:
                figures["export"] = measure_export(service, cookies["admin"], options.export_runs)
                e = figures["export"]
                log(f"size {size}: export {e['rows']} rows p50 {e['p50_s']:.2f}s, "
                    f"peak growth {e['peak_growth_mb']:.1f} MB")
            if not options.only or "osha_log_pdf" in options.only:
                clear_queue(options.redis_url)  # the mail the rows queued: not the worker's to send here
                with (workdir / "worker.log").open("a") as out:
                    worker = subprocess.Popen([ehs, "worker", str(INI), "--workers", "1"], env=env,  # noqa: S603
                                              stdout=out, stderr=subprocess.STDOUT, cwd=ROOT)
                try:
                    time.sleep(3)  # the consumer's start-up
                    figures["osha_log_pdf"] = measure_pdf_job(service, worker, cookies["admin"], origin, f,
                                                              options.pdf_runs)
                    j = figures["osha_log_pdf"]
                    log(f"size {size}: 300 Log PDF ({j['pages']} pages) p50 {j['p50_s']:.1f}s, "
                        f"worker peak growth {j['peak_growth_mb']:.0f} MB")
                finally:
                    worker.send_signal(signal.SIGINT)
                    try:
                        worker.wait(timeout=60)
                    except subprocess.TimeoutExpired:
                        worker.kill()
                        worker.wait(timeout=10)
            result["figures"] = figures
            # The peak resident memory of each serving worker over the whole run (VmHWM).
            result["peak_rss_mb"] = sorted(round(max(peaks.get(pid, 0), proc_status(pid, "VmHWM")) / 2**20, 1)
                                           for pid in service.worker_pids())
        finally:
            service.stop()
            bare.stop()
            clear_queue(options.redis_url)
    if not options.keep:
        shutil.rmtree(workdir, ignore_errors=True)
    return result


def table_counts(url: str) -> dict[str, int]:
    """Rows of the main tables of a reused database (estimates from the
    planner's statistics for the big ones would do, but these are exact)."""
    engine = sa.create_engine(url)
    try:
        with engine.connect() as conn:
            return {table: conn.exec_driver_sql(f"SELECT count(*) FROM {table}").scalar()  # noqa: S608
                    for table in ("users", "sites", "incidents", "corrective_actions", "audit_entries")}
    finally:
        engine.dispose()


def seed_counts(logfile: Path) -> dict[str, int]:
    counts = {}
    for line in logfile.read_text().splitlines():
        parts = line.split("\t")
        if len(parts) == 2 and parts[1].isdigit():
            counts[parts[0]] = int(parts[1])
    return counts


# --- report --------------------------------------------------------------------------------

# What a person notices: every page answers in well under 100 ms at the
# largest size measured. (row, what is checked, the limit in ms, the target as written.)
PAGES = ("home_page", "list_page", "list_filtered_page", "detail_page", "dashboard_page", "osha_log_page")
TARGETS = [(key, measure, limit, f"{key}: {measure} < {limit} ms")
           for key in PAGES for measure, limit in (("p50", 50), ("p95", 100))]
# Rows measured otherwise than with wrk (their own tables).
NOT_WRK = ("export", "osha_log_pdf")


def share(figures: dict[str, Any], key: str) -> float | None:
    """A row's req/s as a share of the bare view's (the machine's ceiling)."""
    item, bare = figures.get(key), figures.get("bare")
    if not item or not item.get("rps") or not bare or not bare.get("rps"):
        return None
    return item["rps"] / bare["rps"]


def check(figures: dict[str, Any], key: str, kind: str, limit: float) -> tuple[str, bool]:
    """A page's p50 or p95 (ms, at 1 connection) against its limit."""
    item = figures.get(key)
    if not item or item.get(f"{kind}_ms") is None:
        return "not measured", False
    value = item[f"{kind}_ms"]
    return f"{kind} {value:.1f} ms", value < limit


def fmt(value: float | None, digits: int = 1) -> str:
    return "-" if value is None else f"{value:,.{digits}f}"


def markdown(report: dict[str, Any], baseline: dict[str, Any] | None) -> str:
    meta, sizes = report["meta"], report["sizes"]
    keys = sorted(sizes, key=int)
    loadavg = ", ".join(f"{int(k):,}: {sizes[k]['loadavg']}" for k in keys)
    lines = [
        "# Benchmark results",
        "",
        "Written by `python -m bench` (see bench/README.md); not edited by hand.",
        "",
        f"- when: {meta['when']}; commit {meta['commit']}"
        + (f" ({meta['label']})" if meta.get("label") else ""),
        f"- machine: {meta['cpus']} CPUs ({meta['cpu']}), {meta['memory_gb']} GB; PostgreSQL "
        f"{meta['postgres']} on loopback; Python {meta['python']}; load average before each size: {loadavg}",
        f"- service: production.ini under gunicorn, {meta['workers']} workers "
        f"({meta.get('worker_class', 'sync')}) with {meta.get('threads', 1)} threads each, "
        "Redis job queue; the bare view under the same gunicorn settings",
        f"- load: {meta['wrk']} from its own process; per row and round a {meta['duration']:g} s run at "
        f"{meta['connections']} connections (req/s) and a {meta['latency_duration']:g} s run at 1 connection "
        f"(p50, p95; {meta['heavy_duration']:g} s for the stats and OSHA rows); {meta['rounds']} interleaved "
        f"rounds, medians shown; {meta['warmup']:g} s warm-up first",
        *([f"- the pages' targets: each round also sends {meta['pairs']:,} pairs of requests at 1 "
           "connection, a page and its JSON (the same incident) in a random order, timed as wrk times "
           "them; the ratio is of the two p50s over every pair (`measure_paired`)"]
          if meta.get("pairs") else []),
        f"- data: `ehs seed` over {meta['years']:g} years, {meta['sites']} sites; writes during the run add "
        "to it",
        "",
        "## Latency and throughput",
        "",
        f"p50 and p95 in ms at 1 connection; req/s at {meta['connections']} connections, and as a share "
        "of the bare view's req/s.",
        "",
    ]
    head = "| endpoint |" + "".join(f" {int(k):,}: p50 | p95 | req/s | share of bare |" for k in keys)
    lines += [head, "|---|" + "---:|---:|---:|---:|" * len(keys)]
    order = [key for key in sizes[keys[-1]]["figures"] if key not in NOT_WRK]
    for key in order:
        row = f"| {sizes[keys[-1]]['figures'][key]['label']} |"
        for size in keys:
            item = sizes[size]["figures"].get(key)
            if item is None:
                row += " | | | |"
                continue
            note = f" ({item['failed']} failed)" if item["failed"] else ""
            part = share(sizes[size]["figures"], key)
            row += (f" {fmt(item['p50_ms'], 2)} | {fmt(item['p95_ms'], 2)} | {fmt(item['rps'])}{note} |"
                    f" {fmt(part * 100 if part is not None else None, 0)}% |")
        lines.append(row)
    lines += ["", "## Export of 10,000 rows", "",
              "Sequential requests, time to the last byte. Memory: the serving worker's peak RSS during the "
              "request (VmHWM, reset before it) minus its RSS before, and what it still held afterwards.", "",
              "| incidents | rows | bytes | p50 s | max s | peak growth MB (max / median) | retained MB |",
              "|---:|---:|---:|---:|---:|---:|---:|"]
    for size in keys:
        if "export" not in sizes[size]["figures"]:
            continue
        e = sizes[size]["figures"]["export"]
        lines.append(f"| {int(size):,} | {e['rows']:,} | {e['bytes']:,} | {e['p50_s']:.3f} | "
                     f"{e['max_s']:.3f} | {e['peak_growth_mb']:.1f} / {e['peak_growth_median_mb']:.1f} | "
                     f"{e['retained_mb']:.1f} |")
    if any("osha_log_pdf" in sizes[size]["figures"] for size in keys):
        lines += ["", "## The 300 Log of a site-year as a PDF", "",
                  "Made by the worker (`ehs worker`, one thread): asked for (POST), its progress followed "
                  "every 0.25 s, then downloaded; seconds from the request to the file's last byte, one "
                  "after the other. Memory: the worker's peak RSS growth.", "",
                  "| incidents | cases | pages | bytes | p50 s | min s | max s | first progress s | "
                  "peak growth MB |", "|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
        for size in keys:
            j = sizes[size]["figures"].get("osha_log_pdf")
            if j:
                lines.append(f"| {int(size):,} | {j['cases']:,} | {j['pages']} | {j['bytes']:,} | "
                             f"{j['p50_s']:.1f} | {j['min_s']:.1f} | {j['max_s']:.1f} | "
                             f"{j['first_progress_s']:.1f} | {j['peak_growth_mb']:.0f} |")
    lines += ["", "## Seeding", "", "| incidents | migrate s | seed s | rows written |",
              "|---:|---:|---:|---|"]
    for size in keys:
        s = sizes[size]
        rows = ", ".join(f"{table} {count:,}" for table, count in s["seed_rows"].items())
        seeded = "reused" if s["seed_s"] is None else f"{s['seed_s']:.1f}"
        lines.append(f"| {int(size):,} | {s['migrate_s']:.1f} | {seeded} | {rows} |")
    lines += ["", "## The data the rows read", "",
              f"| incidents | closed | `q={SEARCHES[0]}` matches | `q={SEARCHES[1]}` matches | "
              "recordable cases in the OSHA log's site-year |", "|---:|---:|---:|---:|---:|"]
    for size in keys:
        f = sizes[size]["facts"]
        lines.append(f"| {int(size):,} | {f['closed']:,} | {f['search_matches'][SEARCHES[0]]:,} | "
                     f"{f['search_matches'][SEARCHES[1]]:,} | {f['log_cases']:,} |")
    largest = keys[-1]
    lines += ["", f"## Targets at {int(largest):,} incidents", "", "| target | measured | met |",
              "|---|---|---|"]
    for key, kind, limit, text in TARGETS:
        if key in sizes[largest]["figures"]:
            value, met = check(sizes[largest]["figures"], key, kind, limit)
            lines.append(f"| {text} | {value} | {'yes' if met else '**no**'} |")
    if baseline:
        lines += comparison(baseline, report)
    return "\n".join(lines) + "\n"


def comparison(before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    lines = ["", "## Before and after the fixes", "",
             f"Before: the same command on commit {before['meta']['commit']} ({before['meta']['when']}; "
             f"{before['meta'].get('label') or 'no label'}); after: this run. p50 at 1 connection, req/s "
             "at the loaded connection count.", "",
             "| endpoint | incidents | p50 ms before → after | req/s before → after "
             "| share of bare before → after |", "|---|---:|---|---|---|"]
    for size in sorted(after["sizes"], key=int):
        if size not in before["sizes"]:
            continue
        old, new = before["sizes"][size]["figures"], after["sizes"][size]["figures"]
        for key, item in new.items():
            if key in NOT_WRK or key not in old:
                continue
            shares = [share(figures, key) for figures in (old, new)]
            shown = " → ".join("-" if part is None else f"{part:.0%}" for part in shares)
            lines.append(f"| {item['label']} | {int(size):,} | {fmt(old[key]['p50_ms'], 2)} → "
                         f"{fmt(item['p50_ms'], 2)} | {fmt(old[key]['rps'])} → {fmt(item['rps'])} | "
                         f"{shown} |")
        if "export" in old and "export" in new:
            o, n = old["export"], new["export"]
            lines.append(f"| export of 10,000 rows (s; peak growth) | {int(size):,} | "
                         f"{o['p50_s'] * 1000:.0f} → {n['p50_s'] * 1000:.0f} ms | "
                         f"+{o['peak_growth_mb']:.1f} → +{n['peak_growth_mb']:.1f} MB | |")
    return lines


def latest_rows(figures: dict[str, Any]) -> dict[str, dict[str, float | None]]:
    """Every row as {p50_ms, p95_ms, rps}: the wrk rows as measured; the
    export and the 300 Log PDF (timed one after the other, end to end) with
    their median and slowest run as p50 and p95, and no req/s."""
    rows: dict[str, dict[str, float | None]] = {}
    for key, item in figures.items():
        if key in NOT_WRK:
            rows[key] = {"p50_ms": round(item["p50_s"] * 1000, 1), "p95_ms": round(item["max_s"] * 1000, 1),
                         "rps": None}
        else:
            rows[key] = {"p50_ms": item["p50_ms"], "p95_ms": item["p95_ms"], "rps": item["rps"]}
    return rows


def write_latest(report: dict[str, Any]) -> None:
    """`bench/results-latest.json` (issue #42 item 1): per size, every row's
    p50, p95 and req/s, the peak RSS of each worker, the seed's time. A size
    measured now replaces that size's entry; the other sizes stay, so a
    million-incident run made separately joins the same file."""
    latest = json.loads(LATEST.read_text()) if LATEST.exists() else {"sizes": {}}
    for size, result in report["sizes"].items():
        rows = latest_rows(result.get("figures", {}))
        if report["meta"].get("only_rows") and size in latest["sizes"]:
            # A few rows measured again: the size's other figures stay those of its full run.
            latest["sizes"][size]["rows"].update(rows)
            continue
        latest["sizes"][size] = {
            "rows": rows, "peak_rss_mb_per_worker": result.get("peak_rss_mb"),
            "seed_s": result.get("seed_s"), "loadavg": result.get("loadavg"),
            "when": report["meta"]["when"], "commit": report["meta"]["commit"],
            "label": report["meta"].get("label", "")}
    latest["sizes"] = dict(sorted(latest["sizes"].items(), key=lambda item: int(item[0])))
    LATEST.write_text(json.dumps(latest, indent=1) + "\n")
    update_latest_table(latest)


LATEST_BLOCK = re.compile(r"(<!-- latest:begin -->\n).*?(<!-- latest:end -->)", re.S)


def update_latest_table(latest: dict[str, Any]) -> None:
    """The table of `results-latest.json` between the README's markers."""
    sizes = latest["sizes"]
    keys = list(sizes)
    order: list[str] = []
    for size in keys:
        order += [row for row in sizes[size]["rows"] if row not in order]
    lines = ["| row |" + "".join(f" {int(k):,}: p50 ms | p95 ms | req/s |" for k in keys),
             "|---|" + "---:|---:|---:|" * len(keys)]
    for row in order:
        line = f"| `{row}` |"
        for size in keys:
            item = sizes[size]["rows"].get(row)
            line += (" | | |" if item is None else
                     f" {fmt(item['p50_ms'])} | {fmt(item['p95_ms'])} | {fmt(item['rps'])} |")
        lines.append(line)
    lines.append("| peak RSS per worker, MB |" + "".join(
        f" {', '.join(map(str, sizes[k].get('peak_rss_mb_per_worker') or [])) or '-'} | | |" for k in keys))
    lines.append("| seeded in, s |" + "".join(
        f" {fmt(sizes[k].get('seed_s'), 0) if sizes[k].get('seed_s') else 'reused'} | | |" for k in keys))
    lines.append("| load average before |" + "".join(f" {sizes[k].get('loadavg', '?')} | | |" for k in keys))
    readme = HERE / "README.md"
    text = readme.read_text()
    if LATEST_BLOCK.search(text):
        readme.write_text(LATEST_BLOCK.sub(lambda m: m.group(1) + "\n".join(lines) + "\n" + m.group(2), text))


def meta(options: Options) -> dict[str, Any]:
    def out(cmd: list[str]) -> str:
        with suppress(Exception):
            return subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT,  # noqa: S603
                                  timeout=30, check=False).stdout.strip()
        return "?"

    commit = out(["git", "rev-parse", "--short", "HEAD"])
    if out(["git", "status", "--porcelain", "--untracked-files=no"]):
        commit += " plus uncommitted changes"
    cpu = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                if line.startswith("model name")), platform.processor())
    memory = int(Path("/proc/meminfo").read_text().split()[1]) / 2**20
    server, _ = database_urls(options, "postgres")
    engine = sa.create_engine(server)
    try:
        with engine.connect() as conn:
            postgres = conn.execute(sa.text("SHOW server_version")).scalar()
    finally:
        engine.dispose()
    wrk_version = out(["wrk", "--version"]).split(" Copyright")[0] or "wrk"
    return {"when": dt.datetime.now().astimezone().isoformat(timespec="seconds"), "commit": commit,
            "cpus": os.cpu_count(), "cpu": cpu, "memory_gb": round(memory), "postgres": postgres,
            "python": platform.python_version(), "workers": options.workers,
            "threads": options.threads, "worker_class": WORKER_CLASS,
            "connections": options.connections, "rounds": options.rounds, "duration": options.duration,
            "latency_duration": options.latency_duration, "heavy_duration": options.heavy_duration,
            "warmup": options.warmup, "years": options.years, "sites": options.sites, "wrk": wrk_version,
            "label": options.label, "pairs": options.pairs, "only_rows": bool(options.only)}


def ensure_wrk() -> None:
    if shutil.which("wrk"):
        return
    if shutil.which("apt-get"):
        log("installing wrk (Debian package)")
        sudo = [] if os.geteuid() == 0 else ["sudo"]
        subprocess.run([*sudo, "apt-get", "update", "-qq"], check=True)  # noqa: S603
        subprocess.run([*sudo, "apt-get", "install", "-y", "-qq", "wrk"], check=True)  # noqa: S603
    if not shutil.which("wrk"):
        raise SystemExit("bench: wrk is missing; install the wrk package (Debian/Ubuntu) or wrk (Homebrew)")


def parse(argv: list[str] | None) -> Options:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="10000,100000", help="incident counts, comma separated")
    parser.add_argument("--years", type=float, default=3)
    parser.add_argument("--sites", type=int, default=8)
    parser.add_argument("--workers", type=int, default=4, help="gunicorn workers (both apps)")
    parser.add_argument("--threads", type=int, default=4, help="threads per worker (production.ini: 4)")
    parser.add_argument("--connections", type=int, default=8, help="wrk connections of the req/s runs")
    parser.add_argument("--rounds", type=int, default=3, help="interleaved rounds; medians are reported")
    parser.add_argument("--pairs", type=int, default=0,
                        help="per round, requests of each page and its JSON in alternation (0: none)")
    parser.add_argument("--duration", type=float, default=4, help="seconds of each req/s run")
    parser.add_argument("--latency-duration", type=float, default=3, help="seconds of each 1-connection run")
    parser.add_argument("--heavy-duration", type=float, default=6,
                        help="seconds of each 1-connection run of the stats and OSHA rows")
    parser.add_argument("--warmup", type=float, default=3,
                        help="seconds of warm-up before a row's first round")
    parser.add_argument("--export-runs", type=int, default=8)
    parser.add_argument("--pdf-runs", type=int, default=3, help="300 Log PDFs made by the worker, in a row")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--postgres-url", default=os.environ.get(
        "EHS_BENCH_POSTGRES_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/postgres"),
        help="server to create the benchmark databases on (env EHS_BENCH_POSTGRES_URL)")
    parser.add_argument("--redis-url", default=os.environ.get("EHS_BENCH_REDIS_URL", "redis://127.0.0.1:6379/13"),
                        help="Redis database for the service's job queue (env EHS_BENCH_REDIS_URL)")
    parser.add_argument("--output", type=Path, default=HERE / "results.md",
                        help="markdown report; the figures also go to the same name with .json")
    parser.add_argument("--baseline", type=Path, default=None,
                        help="an earlier results .json to compare with (before/after table)")
    parser.add_argument("--keep", action="store_true", help="keep databases and work directories")
    parser.add_argument("--reuse", action="store_true",
                        help="measure on the database an earlier --keep run left (migrated to head, not "
                             "seeded again; it holds that run's writes too)")
    parser.add_argument("--seed-timeout", type=float, default=1800, help="seconds seeding may take")
    parser.add_argument("--label", default="", help="a note on what was measured, kept in the report")
    parser.add_argument("--database", default="ehs_bench_{size}",
                        help="the database's name ({size} is the size); another name keeps two runs on "
                             "one server apart")
    parser.add_argument("--only", default="",
                        help="measure only these rows (keys, comma separated; for a look)")
    args = parser.parse_args(argv)
    return Options(sizes=[int(s) for s in args.sizes.split(",") if s.strip()], years=args.years,
                   sites=args.sites, workers=args.workers, threads=args.threads,
                   connections=args.connections, rounds=args.rounds,
                   duration=args.duration, latency_duration=args.latency_duration,
                   heavy_duration=args.heavy_duration, warmup=args.warmup, export_runs=args.export_runs,
                   postgres_url=args.postgres_url, redis_url=args.redis_url, output=args.output,
                   baseline=args.baseline, keep=args.keep, reuse=args.reuse,
                   seed_timeout=args.seed_timeout, seed=args.seed, label=args.label, pairs=args.pairs,
                   only={key for key in args.only.split(",") if key}, database=args.database,
                   pdf_runs=args.pdf_runs)


def main(argv: list[str] | None = None) -> int:
    options = parse(argv)
    ensure_wrk()
    report: dict[str, Any] = {"meta": meta(options), "sizes": {}}
    started = time.monotonic()
    for size in options.sizes:
        size_started = time.monotonic()
        load = Path("/proc/loadavg").read_text().split()[0]
        report["sizes"][str(size)] = run_size(options, size)
        report["sizes"][str(size)]["loadavg"] = load
        report["sizes"][str(size)]["seconds"] = round(time.monotonic() - size_started)
        log(f"size {size} done in {time.monotonic() - size_started:.0f}s")
    baseline = json.loads(options.baseline.read_text()) if options.baseline else None
    text = markdown(report, baseline)
    options.output.write_text(text)
    options.output.with_suffix(".json").write_text(json.dumps(report, indent=1, default=str) + "\n")
    write_latest(report)  # and its table in README.md
    print(text)
    log(f"done in {time.monotonic() - started:.0f}s; wrote {options.output}")
    return 0
