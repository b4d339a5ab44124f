"""EHS incident service: the core application."""

from __future__ import annotations

import logging
from typing import Any

from pyramid.router import Router

from ehs_core.settings import SettingsError

log = logging.getLogger(__name__)


def main(global_config: dict[str, Any], **settings: Any) -> Router:
    """WSGI application factory (`pserve`, gunicorn --paste)."""
    from ehs_core.config import configure
    from ehs_core.errors import LastResortErrors
    from ehs_core.jobs import start_in_process_runner
    from ehs_core.migrations import upgrade_if_enabled

    try:
        config = configure(settings)
    except SettingsError as exc:
        raise SystemExit(f"ehs: {exc}") from None
    upgrade_if_enabled(config.registry)
    app = LastResortErrors(config.make_wsgi_app())
    start_in_process_runner(config.registry)
    return app
