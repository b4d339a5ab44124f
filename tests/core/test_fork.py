"""A forked worker process (gunicorn's, from `pserve production.ini`, which
builds the application before it forks) opens database connections of its
own and runs the jobs its requests queue; the parent keeps its connections
and its clock's jobs."""

from __future__ import annotations

import os
import time

import pytest
from pyramid.registry import Registry
from sqlalchemy import text
from sqlalchemy.orm import sessionmaker

from ehs_core.db import Base, make_engine
from ehs_core.jobs import Job, enqueue, start_in_process_runner, wake
from ehs_core.jobs.models import JobRunnerBeat, OutboxJob

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


def test_a_forked_child_runs_jobs_in_a_runner_of_its_own(tmp_path):
    """The parent's runner thread does not survive a fork: the child gets
    its own (which also writes the clock's rows: their unique keys keep
    each period to one run), and runs the jobs written to the database."""
    engine = make_engine({"sqlalchemy.url": f"sqlite:///{tmp_path / 'jobs.sqlite'}"})
    Base.metadata.create_all(engine, tables=[OutboxJob.__table__, JobRunnerBeat.__table__])
    registry = Registry("fork-test")
    registry.settings = {"ehs.huey_url": "", "ehs.job_lease": 60}
    registry["dbsession_factory"] = sessionmaker(bind=engine)
    done = tmp_path / "done"
    registry["jobs"] = {"note_pid": Job("note_pid", lambda reg: done.write_text(str(os.getpid())))}
    registry["periodic"] = {}

    parents_runner = start_in_process_runner(registry)
    try:
        def queue_and_wait() -> bytes:
            runner = registry["job_runner"]
            with registry["dbsession_factory"]() as dbsession, dbsession.begin():
                enqueue(dbsession, "note_pid")
            wake(registry)
            deadline = time.monotonic() + 10
            while not done.exists() and time.monotonic() < deadline:
                time.sleep(0.02)
            return f"{runner is not parents_runner} {runner.is_alive()}".encode()

        parents_runner.stop()  # only the child may run the job
        parents_runner.join(5)
        code, answer = in_child(queue_and_wait)
        assert code == 0
        assert answer == b"True True"  # a runner of its own, alive
        assert done.exists() and int(done.read_text()) != os.getpid()  # run in the child
        assert registry["job_runner"] is parents_runner
    finally:
        parents_runner.stop()
        engine.dispose()
