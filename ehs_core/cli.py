"""The `ehs` command: migrate, worker, digest, plugins. Each bootstraps the
application through the same `configure()` as the web server."""

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
    registry = _bootstrap(args.config)
    huey = registry["huey"]
    if not registry.settings.get("ehs.huey_url"):
        print("ehs.huey_url is empty: jobs run inside the web process; "
              "set EHS_HUEY_URL=redis://… to use a separate worker", file=sys.stderr)
        return 2
    consumer = huey.create_consumer(workers=args.workers, worker_type="thread",
                                    periodic=True, check_worker_health=True)
    consumer.run()
    return 0


def cmd_digest(args: argparse.Namespace) -> int:
    registry = _bootstrap(args.config)
    job = registry.get("digest_runner")
    if job is None:
        print("no digest is registered")
        return 0
    sent = job(registry)
    print(f"{sent} digest(s) sent")
    return 0


def cmd_plugins(args: argparse.Namespace) -> int:
    from ehs_core.plugins import discover

    registry = _bootstrap(args.config)
    enabled = set(registry.get("enabled_plugins", ()))
    for name, ep in sorted(discover().items()):
        state = "enabled" if name in enabled else "disabled"
        print(f"{name}\t{state}\t{ep.value}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="ehs", description="EHS incident service")
    sub = parser.add_subparsers(dest="command", required=True)
    for name, func, text in (
        ("migrate", cmd_migrate, "bring the core's and enabled plugins' schema to head"),
        ("worker", cmd_worker, "run the background-job consumer (with periodic jobs)"),
        ("digest", cmd_digest, "send the daily action digest now"),
        ("plugins", cmd_plugins, "list discovered plugins and which are enabled"),
    ):
        command = sub.add_parser(name, help=text)
        command.add_argument("config", help="path to the ini file")
        command.set_defaults(func=func)
        if name == "worker":
            command.add_argument("--workers", type=int, default=2)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO)
    try:
        return args.func(args)
    except SettingsError as exc:
        print(f"ehs: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
