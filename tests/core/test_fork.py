"""A forked worker process (gunicorn's, from `pserve production.ini`, which
builds the application before it forks) opens database connections of its
own and runs the jobs its requests queue; the parent keeps its connections
and its clock's jobs."""

from __future__ import annotations

import os
import time

import pytest
from huey import MemoryHuey
from pyramid.registry import Registry
from sqlalchemy import text

from ehs_core.db import make_engine
from ehs_core.jobs import start_in_process_runner

PG = os.environ.get("EHS_TEST_POSTGRES_URL")


def in_child(work) -> tuple[int, bytes]:
    """Fork; run `work()` in the child, which answers bytes; return the
    child's exit status and answer."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never back into pytest
        code = 1
        try:
            os.close(read)
            os.write(write, work())
            code = 0
        finally:
            os._exit(code)
    os.close(write)
    answer = b""
    while chunk := os.read(read, 4096):
        answer += chunk
    os.close(read)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status), answer


@pytest.mark.postgres
@pytest.mark.skipif(not PG, reason="needs EHS_TEST_POSTGRES_URL")
def test_a_forked_child_never_uses_its_parents_pooled_connection():
    engine = make_engine({"sqlalchemy.url": PG})
    backend = text("SELECT pg_backend_pid()")
    try:
        with engine.connect() as conn:  # pooled when closed, as the arbiter's job runner leaves it
            parents = conn.execute(backend).scalar()

        def child_backend() -> bytes:
            with engine.connect() as conn:
                return str(conn.execute(backend).scalar()).encode()

        code, answer = in_child(child_backend)
        assert code == 0
        assert int(answer) != parents
        # The child left the parent's connection open and unused.
        with engine.connect() as conn:
            assert conn.execute(backend).scalar() == parents
    finally:
        engine.dispose()


def test_a_forked_child_runs_the_jobs_it_queues_and_leaves_the_clocks_to_its_parent(tmp_path):
    registry = Registry("fork-test")
    registry.settings = {"ehs.huey_url": ""}
    huey = registry["huey"] = MemoryHuey("fork-test", results=False, utc=True)
    done = tmp_path / "done"

    @huey.task(name="note_pid")
    def note_pid() -> None:
        done.write_text(str(os.getpid()))

    parents_runner = start_in_process_runner(registry)
    try:
        def queue_and_wait() -> bytes:
            runner = registry["job_runner"]
            huey.enqueue(note_pid.s())
            deadline = time.monotonic() + 10
            while not done.exists() and time.monotonic() < deadline:
                time.sleep(0.02)
            return f"{runner is not parents_runner} {runner.periodic} {runner.is_alive()}".encode()

        code, answer = in_child(queue_and_wait)
        assert code == 0
        assert answer == b"True False True"  # a runner of its own, without the clock's jobs
        assert done.exists() and int(done.read_text()) != os.getpid()  # run in the child
        assert registry["job_runner"] is parents_runner and parents_runner.periodic
        assert huey.pending_count() == 0  # the parent's queue was not touched
    finally:
        parents_runner.stop()
        parents_runner.join(5)
