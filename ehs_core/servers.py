"""Paste server runners for `pserve`: waitress (development.ini) and
gunicorn (production.ini), honouring `pserve CONFIG http_port=NNNN`.

A value in the ini's [DEFAULT] section would override the command line's
variables (configparser reads the file after its defaults), so the port is
taken from the command line here and otherwise from the server section.
"""

from __future__ import annotations

from typing import Any


def _with_port(address: str, port: str | None) -> str:
    if not port:
        return address
    host = address.rsplit(":", 1)[0] if ":" in address else address
    return f"{host}:{int(port)}"


def waitress(app: Any, global_conf: dict[str, Any], **local: Any) -> Any:
    from waitress import serve_paste

    local["listen"] = _with_port(local.get("listen", "127.0.0.1:6543"), global_conf.get("http_port"))
    return serve_paste(app, global_conf, **local)


def gunicorn(app: Any, global_conf: dict[str, Any], **local: Any) -> Any:
    from gunicorn.app.pasterapp import serve

    local["bind"] = _with_port(local.get("bind", "127.0.0.1:6543"), global_conf.get("http_port"))
    return serve(app, global_conf, **local)
