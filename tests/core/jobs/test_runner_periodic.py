"""Periodic jobs run once per period, whichever runners and hosts see the
period come (issue 35: the daily digest and the purges must not run once
per worker, nor be lost with one)."""

from __future__ import annotations

import datetime as dt

from ehs_core.jobs import Job, Runner
from ehs_core.jobs.models import DONE, OutboxJob


def every_minute_job(registry, monkeypatch):
    ran = []
    monkeypatch.setitem(registry["jobs"], "test.tick", Job("test.tick", lambda reg: ran.append(1)))
    periodic = {"test.tick": lambda moment: True}
    monkeypatch.setitem(registry, "periodic", periodic)
    return ran


def test_two_runners_seeing_one_minute_run_its_job_once(registry, dbsession, monkeypatch):
    ran = every_minute_job(registry, monkeypatch)
    first, second = Runner(registry, name="host-a"), Runner(registry, name="host-b")
    minute = dt.datetime(2026, 11, 28, 7, 0, 30, tzinfo=dt.UTC)
    first.schedule_periodic(minute)
    second.schedule_periodic(minute)
    first.schedule_periodic(minute)  # the same minute again: nothing new
    rows = dbsession.query(OutboxJob).filter(OutboxJob.job == "test.tick").all()
    assert [row.key for row in rows] == ["test.tick@2026-11-28T07:00Z"]
    assert first.run_due() + second.run_due() == 1
    assert ran == [1]
    dbsession.expire_all()
    assert dbsession.query(OutboxJob).filter(OutboxJob.job == "test.tick").one().status == DONE


def test_a_runner_that_missed_minutes_writes_them_but_only_a_few(registry, dbsession, monkeypatch):
    every_minute_job(registry, monkeypatch)
    runner = Runner(registry, name="host-a")
    start = dt.datetime(2026, 11, 28, 7, 0, tzinfo=dt.UTC)
    runner.schedule_periodic(start)
    runner.schedule_periodic(start + dt.timedelta(minutes=3))
    runner.schedule_periodic(start + dt.timedelta(minutes=30))
    keys = sorted(row.key for row in dbsession.query(OutboxJob).filter(OutboxJob.job == "test.tick"))
    assert keys == [f"test.tick@2026-11-28T07:{m:02d}Z" for m in (0, 1, 2, 3, 26, 27, 28, 29, 30)]


def test_the_test_kits_runner_never_runs_the_clocks_jobs(registry):
    assert registry["job_runner"].periodic is False
