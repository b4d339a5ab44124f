"""The `ehs` command: migrate, worker, digest, plugins, seed, storage-move,
backup, restore. Each bootstraps the application through the same
`configure()` as the web server."""

from __future__ import annotations

import argparse
import logging
import sys
from typing import Any

from pyramid.paster import get_appsettings, setup_logging

from ehs_core.settings import SettingsError


def _bootstrap(ini: str) -> Any:
    from ehs_core.config import configure

    setup_logging(ini)
    return configure(dict(get_appsettings(ini))).registry


def cmd_migrate(args: argparse.Namespace) -> int:
    from ehs_core.migrations import upgrade

    upgrade(_bootstrap(args.config))
    print("schema is at head")
    return 0


def cmd_worker(args: argparse.Namespace) -> int:
    """Run the jobs of the outbox (`ehs_core.jobs`) in `--workers` threads,
    woken through Redis when `ehs.huey_url` names one, else polling. On
    SIGTERM or SIGINT (`systemctl stop`, a release's restart) each thread
    finishes the job in hand, then the command exits: nothing is cut off
    mid-send. A SIGKILL leaves the job in hand to be run again when its
    lease ends (`ehs.job_lease`)."""
    import signal
    import threading

    from ehs_core.jobs import POLL, Runner, redis_wait

    stopping = threading.Event()
    woken = [threading.Event() for _ in range(max(1, args.workers))]

    def stop(signum: int, _frame: Any) -> None:
        logging.getLogger(__name__).info("worker: signal %d, finishing the jobs in hand", signum)
        stopping.set()
        for event in woken:
            event.set()

    signal.signal(signal.SIGTERM, stop)  # before starting up: a stop then is a clean exit too
    signal.signal(signal.SIGINT, stop)
    registry = _bootstrap(args.config)
    url = registry.settings.get("ehs.huey_url")

    def work(index: int) -> None:
        runner = Runner(registry)
        while not stopping.is_set():
            woken[index].clear()
            try:
                runner.beat()
                if index == 0:
                    runner.schedule_periodic()
                runner.run_due(stopping)
            except Exception:
                logging.getLogger(__name__).exception("worker: job runner error")
            woken[index].wait(POLL)

    threads = [threading.Thread(target=work, args=(i,), name=f"ehs-worker-{i}") for i in range(len(woken))]
    for thread in threads:
        thread.start()
    wait = redis_wait(url) if url else None
    print(f"ehs worker: {len(threads)} thread(s), "
          + ("woken through Redis" if url else f"polling every {POLL}s (no ehs.huey_url)"), file=sys.stderr)
    while not stopping.is_set():
        if wait is not None:
            if wait(POLL) and not stopping.is_set():
                for event in woken:
                    event.set()
        else:
            stopping.wait(POLL)
    for thread in threads:
        thread.join()
    return 0


def cmd_digest(args: argparse.Namespace) -> int:
    from ehs_core.actions.digest import send_digests

    registry = _bootstrap(args.config)
    count = send_digests(registry)
    if registry.settings.get("ehs.huey_url"):
        # The worker delivers them, with retries, after this command exits.
        from ehs_core.jobs import wake

        wake(registry)
        print(f"{count} digest(s) queued for the worker")
        return 0
    # No worker: deliver what is due now before exiting, so the count
    # printed is what reached SMTP; what failed stays queued for the web
    # process's runner to retry (admins see lost mail in GET /api/health).
    from ehs_core.jobs import Runner

    runner = Runner(registry)
    results: list[bool] = []
    while (claimed := runner.claim()) is not None:
        results.append(runner.run(claimed))
    failed = results.count(False)
    print(f"{count - failed} digest(s) sent" + (f", {failed} not delivered" if failed else ""))
    return 1 if failed else 0


def cmd_plugins(args: argparse.Namespace) -> int:
    from ehs_core.plugins import discover, enabled_plugins

    registry = _bootstrap(args.config)
    enabled = set(enabled_plugins(registry))
    for name, ep in sorted(discover().items()):
        state = "enabled" if name in enabled else "disabled"
        print(f"{name}\t{state}\t{ep.value}")
    return 0


def cmd_seed(args: argparse.Namespace) -> int:
    from ehs_core.seed import SeedError, SeedOptions, seed

    registry = _bootstrap(args.config)
    options = SeedOptions(incidents=args.incidents, years=args.years, sites=args.sites, seed=args.seed,
                          password=args.password, force=args.force)
    try:
        counts = seed(registry, options, progress=print)
    except SeedError as exc:
        print(f"ehs seed: {exc}", file=sys.stderr)
        return 1
    for table, count in counts.items():
        print(f"{table}\t{count}")
    return 0


def cmd_storage_move(args: argparse.Namespace) -> int:
    from ehs_core.attachments.backends import make_backend
    from ehs_core.attachments.moving import MoveError, move_files
    from ehs_core.settings import SETTINGS

    registry = _bootstrap(args.config)
    parse = next(setting.parse for setting in SETTINGS if setting.key == "ehs.storage")
    try:
        spec = parse(args.to)
    except ValueError as exc:
        print(f"ehs storage-move: --to {args.to!r}: {exc}", file=sys.stderr)
        return 2
    if spec == registry.settings["ehs.storage"]:
        print(f"ehs storage-move: the files are already in {spec}", file=sys.stderr)
        return 2
    if spec == "local" and args.upload_dir:
        registry.settings["ehs.upload_dir"] = args.upload_dir
    target = make_backend(spec, registry)
    source = registry["attachments.storage"]
    print(f"moving attachment files from {source.describe()} to {target.describe()}")
    try:
        report = move_files(registry, target, delete_source=args.delete_source, progress=print)
    except MoveError as exc:
        print(f"ehs storage-move: {exc}", file=sys.stderr)
        return 1
    print(f"copied\t{report.copied}\nalready there\t{report.already_there}\n"
          f"deleted from source\t{report.deleted_from_source}")
    for name in report.missing:
        print(f"missing in the source\t{name}")
    if report.orphans:
        print(f"orphans left in the source (no attachment names them)\t{len(report.orphans)}")
    print(f"now set EHS_STORAGE={spec} on every host" if not report.missing else
          "some files are missing from the source; see above")
    return 1 if report.missing else 0


def cmd_backup(args: argparse.Namespace) -> int:
    from ehs_core.backup import BackupError, backup

    registry = _bootstrap(args.config)
    try:
        manifest = backup(registry, args.directory)
    except BackupError as exc:
        print(f"ehs backup: {exc}", file=sys.stderr)
        return 1
    rows = ", ".join(f"{count} {table}" for table, count in manifest["rows"].items())
    print(f"backup written to {args.directory} ({manifest['database']}; {rows})")
    return 0


def cmd_restore(args: argparse.Namespace) -> int:
    from ehs_core.backup import BackupError, restore

    registry = _bootstrap(args.config)
    try:
        manifest = restore(registry, args.directory)
    except BackupError as exc:
        print(f"ehs restore: {exc}", file=sys.stderr)
        return 1
    print(f"restored the backup of {manifest['createdAt']}; now run ehs migrate if the code is newer")
    return 0


def _seed_arguments(command: argparse.ArgumentParser) -> None:
    command.add_argument("--incidents", type=int, required=True, help="number of incidents to write")
    command.add_argument("--years", type=float, default=3,
                         help="spread them over this many years up to today")
    command.add_argument("--sites", type=int, default=5, help="number of sites (each with areas)")
    command.add_argument("--seed", type=int, default=1, help="random seed (same seed, same data)")
    command.add_argument("--password", default=None,
                         help="password of every seeded user (default: none, sign-in by emailed link only)")
    command.add_argument("--force", action="store_true", help="add to a database that already has incidents")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="ehs", description="EHS incident service")
    sub = parser.add_subparsers(dest="command", required=True)
    for name, func, text in (
        ("migrate", cmd_migrate, "bring the core's and enabled plugins' schema to head"),
        ("worker", cmd_worker, "run the queued jobs and mail, and the periodic jobs"),
        ("digest", cmd_digest, "send the daily action digest now"),
        ("plugins", cmd_plugins, "list discovered plugins and which are enabled"),
        ("seed", cmd_seed, "write realistic synthetic data (users, sites, incidents, history)"),
        ("storage-move", cmd_storage_move, "copy attachment files from ehs.storage to another store"),
        ("backup", cmd_backup, "write the database and the attachment files to a new folder"),
        ("restore", cmd_restore, "restore a backup into an empty database and upload folder"),
    ):
        command = sub.add_parser(name, help=text)
        command.add_argument("config", help="path to the ini file")
        command.set_defaults(func=func)
        if name == "worker":
            command.add_argument("--workers", type=int, default=2)
        if name == "seed":
            _seed_arguments(command)
        if name in ("backup", "restore"):
            command.add_argument("directory", help="the backup's folder")
        if name == "storage-move":
            command.add_argument("--to", required=True, metavar="STORE",
                                 help="local, database or s3://bucket[/prefix]")
            command.add_argument("--upload-dir", default=None,
                                 help="the folder when moving to local (default: ehs.upload_dir)")
            command.add_argument("--delete-source", action="store_true",
                                 help="remove each file from the current store once it is copied")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO)
    try:
        return args.func(args)
    except SettingsError as exc:
        print(f"ehs: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
