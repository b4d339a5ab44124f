"""CPU time of one endpoint in-process, without HTTP or webtest:
`python -m bench.cpu PATH [--method …] [--body …] [--cprofile]`.

Loads the app from production.ini as gunicorn does (EHS_* settings from the
environment), signs in as a seeded user, and calls the WSGI application
directly with the environ a gunicorn sync worker would build, `--rounds` times
`-n` requests. Prints, for the best round, the wall and CPU (process) time per
request and the statements each request sent: the figures the machine's load
moves least. `--cprofile` prints cProfile's top functions over one more round
(timed by CPU time, so waiting for PostgreSQL is not counted).

`--cold` times each request after emptying the CPU's caches (what a
gunicorn worker meets among its siblings; see `cold`).

`--misses` counts, under callgrind's simulation of this machine's caches,
the instructions and the cache misses of each request after the caches are
emptied (`count_misses`): the cold cost, in figures that do not move with
the machine's load (round 13).

`--instructions` runs the same under valgrind's callgrind and prints the
instructions one request executes in this process (Python, SQLAlchemy,
psycopg; PostgreSQL's own work is another process): a count that does not
depend on what else the machine runs, so two versions of the code compare
on a loaded machine too (`--bare`: the bare Pyramid view, for the ratio).

    .venv/bin/python -m bench.cpu /api/auth/me --instructions
    .venv/bin/python -m bench.cpu / --bare --instructions
    .venv/bin/python -m bench.cpu /api/incidents --method POST --body '{"title": …, "clientId": "{uuid}"}'
"""

from __future__ import annotations

import argparse
import cProfile
import io
import os
import pstats
import sys
import time
import uuid
from typing import Any

from sqlalchemy import event

from bench.profile import ROOT, sign_in


def environ_for(method: str, path: str, cookie: str, origin: str, body: bytes | None) -> dict[str, Any]:
    path_info, _, query = path.partition("?")
    environ = {
        "REQUEST_METHOD": method, "SCRIPT_NAME": "", "PATH_INFO": path_info, "QUERY_STRING": query,
        "RAW_URI": path, "SERVER_NAME": "127.0.0.1", "SERVER_PORT": "6543", "SERVER_PROTOCOL": "HTTP/1.1",
        "REMOTE_ADDR": "127.0.0.1", "REMOTE_PORT": "50000", "HTTP_HOST": "127.0.0.1:6543",
        "HTTP_USER_AGENT": "wrk", "HTTP_ACCEPT": "application/json",
        "HTTP_COOKIE": f"service_session={cookie}", "HTTP_ORIGIN": origin,
        "wsgi.url_scheme": "http", "wsgi.version": (1, 0), "wsgi.multithread": False,
        "wsgi.multiprocess": True, "wsgi.run_once": False, "wsgi.errors": io.StringIO(),
    }
    if body is not None:
        environ["CONTENT_TYPE"] = "application/json"
        environ["CONTENT_LENGTH"] = str(len(body))
    return environ


def count_instructions(argv: list[str], n: int) -> int:
    """Run this command again under callgrind, instrumenting only the
    measured requests, and print the instructions per request."""
    import re
    import shutil
    import subprocess
    import tempfile

    valgrind = shutil.which("valgrind")
    if valgrind is None:
        raise SystemExit("bench.cpu: --instructions needs valgrind (the Debian package valgrind)")
    with tempfile.TemporaryDirectory() as tmp:
        done = subprocess.run([valgrind, "--tool=callgrind", "--instr-atstart=no",  # noqa: S603
                               f"--callgrind-out-file={tmp}/callgrind.out", sys.executable, "-m", "bench.cpu",
                               *argv, "--callgrind"], capture_output=True, text=True, check=False)
    found = re.search(r"Collected : (\d+)", done.stderr)
    answer = re.search(r"requests instrumented; answers (.*)", done.stdout)
    if done.returncode != 0 or found is None or answer is None:
        print(done.stdout[-2000:], done.stderr[-2000:])
        return 1
    print(f"{' '.join(argv)}: {int(found.group(1)) / n / 1e6:.3f} M instructions per request "
          f"(callgrind, {n} requests; answers {answer.group(1)})")
    return 0


# What callgrind counts with its cache simulation, in the order it prints them.
CACHE_EVENTS = ("Ir", "Dr", "Dw", "I1mr", "D1mr", "D1mw", "ILmr", "DLmr", "DLmw")


def count_misses(argv: list[str], n: int) -> int:
    """Run this command again under callgrind with its cache simulation, each
    of `n` requests after the caches are emptied, and once more switching
    around nothing; print the difference per request: instructions, first-
    level misses (I1mr: code, D1mr/D1mw: data) and last-level misses (LL:
    ILmr + DLmr + DLmw, each a trip to memory). Under gunicorn a worker
    meets its caches mostly cold, and a request that runs much Python code
    once (a page's template, its helpers) pays for its misses more than for
    its instructions: these are the figures to compare two versions of a
    page by, on a machine whose speed drifts (round 13)."""
    import re
    import shutil
    import subprocess
    import tempfile

    valgrind = shutil.which("valgrind")
    if valgrind is None:
        raise SystemExit("bench.cpu: --misses needs valgrind (the Debian package valgrind)")
    totals = []
    for extra in ([], ["--noop"]):
        with tempfile.TemporaryDirectory() as tmp:
            command = [valgrind, "--tool=callgrind", "--instr-atstart=no", "--cache-sim=yes",
                       f"--callgrind-out-file={tmp}/callgrind.out", sys.executable, "-m", "bench.cpu",
                       *argv, "--callgrind", "--cache-sim", *extra]
            done = subprocess.run(command,  # noqa: S603
                                  capture_output=True, text=True, check=False,
                                  env={**os.environ, "PYTHONHASHSEED": "0"})
        found = re.search(r"Collected : ([\d ]+)", done.stderr)
        if done.returncode != 0 or found is None:
            print(done.stdout[-2000:], done.stderr[-2000:])
            return 1
        totals.append([int(v) for v in found.group(1).split()])
    per = {name: (a - b) / n for name, a, b in zip(CACHE_EVENTS, *totals, strict=True)}
    last_level = per["ILmr"] + per["DLmr"] + per["DLmw"]
    print(f"{' '.join(argv)}: per request, caches emptied before each "
          f"(callgrind's simulation, {n} requests): "
          f"{per['Ir'] / 1e6:.3f} M instructions, I1 misses {per['I1mr'] / 1e3:.1f} k, "
          f"D1 misses {(per['D1mr'] + per['D1mw']) / 1e3:.1f} k, LL misses {last_level / 1e3:.1f} k")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.cpu", description=__doc__)
    parser.add_argument("path")
    parser.add_argument("--method", default="GET")
    parser.add_argument("--body", default=None, help="a JSON body; {uuid} becomes a fresh UUID each time")
    parser.add_argument("--user", default="admin1@seed.example")
    parser.add_argument("-n", type=int, default=500, help="requests per round")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--bare", action="store_true", help="the bare Pyramid view (bench/bare.py) instead")
    parser.add_argument("--cprofile", action="store_true")
    parser.add_argument("--sort", default="tottime")
    parser.add_argument("--top", type=int, default=45)
    parser.add_argument("--dump", default=None, help="write the cProfile statistics here")
    parser.add_argument("--instructions", action="store_true",
                        help="instructions per request, counted by valgrind's callgrind over -n requests")
    parser.add_argument("--cold", action="store_true",
                        help="the CPU's caches emptied before each request (as a worker finds them under "
                             "gunicorn's other workers): the median wall time of -n x --rounds requests")
    parser.add_argument("--misses", action="store_true",
                        help="instructions and cache misses per request with the caches emptied before "
                             "each, from valgrind's cache simulation over -n requests")
    parser.add_argument("--noop", action="store_true",
                        help="(what --misses runs to subtract) instrument nothing but the switching")
    parser.add_argument("--callgrind", action="store_true",
                        help="(what --instructions runs) under `valgrind --tool=callgrind "
                             "--instr-atstart=no`: instrument -n requests only")
    parser.add_argument("--cache-sim", action="store_true",
                        help="(what --misses runs) with the caches simulated")
    args = parser.parse_args(argv)
    if args.misses:
        return count_misses([arg for arg in (argv if argv is not None else sys.argv[1:])
                             if arg != "--misses"], args.n)
    if args.instructions:
        return count_instructions([arg for arg in (argv if argv is not None else sys.argv[1:])
                                   if arg != "--instructions"], args.n)

    from pyramid.paster import get_app
    from webtest import TestApp

    origin = os.environ.get("EHS_PUBLIC_URL", "http://127.0.0.1:6543")
    statements = [0]
    counted: list[Any] = []
    cookie = ""
    if args.bare:
        from bench.bare import app as wsgi
    else:
        wsgi = get_app(str(ROOT / "production.ini"))
        client = TestApp(wsgi, extra_environ={"HTTP_ORIGIN": origin})
        sign_in(client, args.user)
        cookie = client.cookies["service_session"]
        router = wsgi.app if hasattr(wsgi, "app") else wsgi

        def _count(*_: Any) -> None:
            statements[0] += 1

        # Counted over the warm-up only: a listener is work production does
        # not do, and it sends the statements `PlainRead` runs on the DBAPI
        # cursor through SQLAlchemy (`ehs_core.db.PlainRead`).
        counted = [router.registry[key] for key in ("db.engine", "db.autocommit_engine")
                   if key in router.registry and not args.callgrind]
        for engine in counted:
            event.listen(engine, "before_cursor_execute", _count)

    statuses: dict[str, int] = {}

    def start_response(status: str, headers: Any, exc_info: Any = None) -> None:
        statuses[status] = statuses.get(status, 0) + 1

    def once() -> None:
        body = None
        if args.body is not None:
            body = args.body.replace("{uuid}", str(uuid.uuid4())).encode()
        environ = environ_for(args.method, args.path, cookie, origin, body)
        environ["wsgi.input"] = io.BytesIO(body or b"")
        result = wsgi(environ, start_response)
        for _ in result:
            pass
        if hasattr(result, "close"):
            result.close()

    for _ in range(50):
        once()
    for engine in counted:
        event.remove(engine, "before_cursor_execute", _count)
    per_request = statements[0] / 50
    if args.callgrind:
        import shutil
        import subprocess

        control = shutil.which("callgrind_control") or "callgrind_control"

        def instrument(state: str) -> None:
            subprocess.run([control, "-i", state, str(os.getpid())], check=True,  # noqa: S603
                           capture_output=True)

        if args.cache_sim:
            # Each request alone, after a write to every line of a buffer
            # larger than the simulated caches; `--noop` switches around
            # nothing, to subtract what switching itself counts.
            flush = bytearray(FLUSH_BYTES)
            line = b"\x01" * (FLUSH_BYTES // 64)
            for _ in range(args.n):
                flush[::64] = line
                instrument("on")
                if not args.noop:
                    once()
                instrument("off")
        else:
            instrument("on")
            for _ in range(args.n):
                once()
            instrument("off")
        print(f"{args.method} {args.path}: {args.n} requests instrumented; answers {statuses}")
        return 0
    if args.cold:
        return cold(once, args, per_request, statuses)
    best = None
    for _ in range(args.rounds):
        wall, cpu = time.perf_counter(), time.process_time()
        for _ in range(args.n):
            once()
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        round_ = (cpu / args.n * 1000, wall / args.n * 1000)
        best = round_ if best is None or round_ < best else best
    print(f"{args.method} {args.path}: CPU {best[0]:.3f} ms, wall {best[1]:.3f} ms per request "
          f"(best of {args.rounds} x {args.n}), {per_request:.1f} statements; answers {statuses}; "
          f"load {os.getloadavg()[0]:.2f}")
    if args.cprofile:
        # CPU time as the clock: time spent waiting for PostgreSQL is not counted.
        profile = cProfile.Profile(time.thread_time)
        profile.enable()
        for _ in range(args.n):
            once()
        profile.disable()
        out = io.StringIO()
        pstats.Stats(profile, stream=out).sort_stats(args.sort).print_stats(args.top)
        print(out.getvalue())
        if args.dump:
            profile.dump_stats(args.dump)
    return 0


# More than the caches of this kind of machine hold (its last level: 30 MB or so, shared).
FLUSH_BYTES = 96 * 1024 * 1024


def cold(once: Any, args: argparse.Namespace, per_request: float, statuses: dict[str, int]) -> int:
    """`--cold`: each request timed after a write to every cache line of a
    buffer larger than the caches. Under gunicorn a sync worker serves a
    request after its siblings served others, and finds little of its code
    and data in the caches: there the incident page took 0.3 ms more than
    here and its JSON 0.13 ms, a penalty that grows with how much memory a
    request touches rather than with the instructions it executes. This
    shows it in one process, without the network's noise."""
    import statistics

    flush = bytearray(FLUSH_BYTES)
    line = b"\x01" * (FLUSH_BYTES // 64)
    walls: list[float] = []
    for _ in range(args.rounds * args.n):
        flush[::64] = line
        start = time.perf_counter()
        once()
        walls.append(time.perf_counter() - start)
    print(f"{args.method} {args.path}: cold wall {statistics.median(walls) * 1000:.3f} ms per request "
          f"(median of {len(walls)}, caches emptied before each), {per_request:.1f} statements; "
          f"answers {statuses}; load {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
