"""EHS incident service: the core application."""

from __future__ import annotations

import logging
import os
from typing import Any
from urllib.parse import urlsplit

from pyramid.router import Router

from ehs_core.settings import SettingsError

log = logging.getLogger(__name__)


def main(global_config: dict[str, Any], **settings: Any) -> Router:
    """WSGI application factory (`pserve`, gunicorn --paste)."""
    from ehs_core.config import configure
    from ehs_core.errors import LastResortErrors
    from ehs_core.jobs import start_in_process_runner
    from ehs_core.migrations import upgrade_if_enabled

    settings = served_public_url(global_config, settings)
    try:
        config = configure(settings)
    except SettingsError as exc:
        raise SystemExit(f"ehs: {exc}") from None
    upgrade_if_enabled(config.registry)
    app = LastResortErrors(config.make_wsgi_app())
    start_in_process_runner(config.registry)
    return app


LOOPBACK = frozenset({"127.0.0.1", "localhost", "[::1]"})


def served_public_url(global_config: dict[str, Any], settings: dict[str, Any]) -> dict[str, Any]:
    """`pserve development.ini http_port=N` serves on N, so a public URL on
    this machine's loopback follows that port: otherwise every form posted
    from the page the developer opened carries an Origin the service refuses
    (ASVS 4.0 V13.2.3 keeps the check; only the expected origin moves). An
    `EHS_PUBLIC_URL` or a public URL on another host is kept as configured."""
    port = global_config.get("http_port")
    configured = settings.get("ehs.public_url", "")
    if not port or os.environ.get("EHS_PUBLIC_URL") or not configured:
        return settings
    parts = urlsplit(configured.strip())
    host = parts.hostname or ""
    shown = f"[{host}]" if ":" in host else host
    if parts.scheme != "http" or shown not in LOOPBACK:
        return settings
    return {**settings, "ehs.public_url": f"http://{shown}:{int(port)}"}
