"""Profile one endpoint in-process: `python -m bench.profile PATH [--method …]`.

Loads the app from production.ini (EHS_* settings from the environment, as
under gunicorn), signs in as a seeded user through the real login endpoint,
warms up, then runs the request N times under pyinstrument and prints where
the time went, plus the mean wall time per request and the statements each
request sent. Point it at a database kept by `python -m bench --keep` or
seeded with `ehs seed`.
"""

from __future__ import annotations

import argparse
import os
import time
import uuid
from pathlib import Path
from typing import Any

from sqlalchemy import event

ROOT = Path(__file__).resolve().parent.parent
PASSWORD = "bench password 2026"  # noqa: S105 (the seeded users of a throwaway database)


def show_statements(engines: list[Any], once: Any) -> None:
    timings: list[tuple[float, str]] = []

    def _before(conn: Any, cursor: Any, statement: str, *_: Any) -> None:
        conn.info["started"] = time.perf_counter()

    def _after(conn: Any, cursor: Any, statement: str, *_: Any) -> None:
        timings.append(((time.perf_counter() - conn.info.pop("started")) * 1000, statement))

    for engine in engines:
        event.listen(engine, "before_cursor_execute", _before)
        event.listen(engine, "after_cursor_execute", _after)
    once()
    for engine in engines:
        event.remove(engine, "before_cursor_execute", _before)
        event.remove(engine, "after_cursor_execute", _after)
    for ms, statement in timings:
        print(f"--- {ms:.2f} ms\n{statement}")


def sign_in(app: Any, email: str) -> None:
    """Reuse the session of an earlier run (sign-ins are rate limited)."""
    import tempfile

    saved = Path(tempfile.gettempdir()) / f"ehs-profile-{email}.cookie"
    if saved.exists():
        app.set_cookie("service_session", saved.read_text())
        if app.get("/api/auth/me", expect_errors=True).status_int == 200:
            return
    app.post_json("/api/auth/login", {"email": email, "password": PASSWORD})
    saved.write_text(app.cookies["service_session"])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.profile", description=__doc__)
    parser.add_argument("path", help="e.g. /api/incidents?type=injury")
    parser.add_argument("--method", default="GET")
    parser.add_argument("--body", default=None, help="a JSON body; {uuid} becomes a fresh UUID each time")
    parser.add_argument("--user", default="admin1@seed.example")
    parser.add_argument("-n", type=int, default=200, help="profiled requests")
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument("--html", default=None, help="also write pyinstrument's HTML here")
    parser.add_argument("--no-profile", action="store_true", help="time only")
    parser.add_argument("--sql", action="store_true", help="print each statement of one request, timed")
    args = parser.parse_args(argv)

    from pyramid.paster import get_app
    from webtest import TestApp

    origin = os.environ.get("EHS_PUBLIC_URL", "http://127.0.0.1:6543")
    app = TestApp(get_app(str(ROOT / "production.ini")), extra_environ={"HTTP_ORIGIN": origin})
    sign_in(app, args.user)
    # Safe requests on PostgreSQL read through an engine of their own (autocommit).
    registry = app.app.registry if hasattr(app.app, "registry") else {}
    engines = [registry[key] for key in ("db.engine", "db.autocommit_engine") if key in registry]
    statements = [0]

    def _count(*_: Any) -> None:
        statements[0] += 1

    for engine in engines:
        event.listen(engine, "before_cursor_execute", _count)

    body = args.body

    def once() -> None:
        if body is None:
            app.request(args.path, method=args.method, expect_errors=False)
        else:
            payload = body.replace("{uuid}", str(uuid.uuid4())).encode()
            app.request(args.path, method=args.method, body=payload, content_type="application/json")

    for _ in range(args.warmup):
        once()
    if args.sql:
        show_statements(engines, once)
    statements[0] = 0
    profiler = None
    if not args.no_profile:
        from pyinstrument import Profiler

        profiler = Profiler(interval=0.0002)
        profiler.start()
    started = time.perf_counter()
    for _ in range(args.n):
        once()
    took = time.perf_counter() - started
    if profiler is not None:
        profiler.stop()
        print(profiler.output_text(unicode=True, color=False, show_all=False))
        if args.html:
            Path(args.html).write_text(profiler.output_html())
    print(f"{args.method} {args.path}: {took / args.n * 1000:.2f} ms per request over {args.n}, "
          f"{statements[0] / args.n:.1f} statements each")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
