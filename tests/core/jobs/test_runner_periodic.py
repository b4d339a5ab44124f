"""The in-process job runner queues the clock's jobs in a web process, and
not in the test kit's, where a job firing mid-test would share the test's
database connection from another thread."""

from __future__ import annotations

from huey import MemoryHuey, crontab

from ehs_core.jobs import InProcessRunner


def runner_with_a_job(periodic: bool) -> tuple[InProcessRunner, list[str]]:
    huey = MemoryHuey(immediate=False)
    ran: list[str] = []

    @huey.periodic_task(crontab(minute="*"), name="every_minute")
    def every_minute() -> None:
        ran.append("every_minute")

    return InProcessRunner(huey, periodic=periodic), ran


def test_a_web_process_runs_the_clocks_jobs():
    runner, ran = runner_with_a_job(periodic=True)
    assert runner.run_pending() == 1 and ran == ["every_minute"]
    assert runner.run_pending() == 0  # once a minute


def test_the_test_kits_runner_leaves_them_alone(registry):
    runner, ran = runner_with_a_job(periodic=False)
    assert runner.run_pending() == 0 and ran == []
    assert registry["job_runner"].periodic is False
