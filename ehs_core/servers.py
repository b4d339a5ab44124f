"""Paste server runners for `pserve`: waitress (development.ini) and
gunicorn (production.ini), honouring `pserve CONFIG http_port=NNNN` and, for
gunicorn, `http_host=ADDRESS` (a web host of a several-host deployment
listens on its private address, where the balancer reaches it) and
`forwarded_allow_ips=ADDRESS,…` (the balancer whose X-Forwarded-* headers
are believed) and `workers=N` (sized to the host's cores).

A value in the ini's [DEFAULT] section would override the command line's
variables (configparser reads the file after its defaults), so the port is
taken from the command line here and otherwise from the server section.
"""

from __future__ import annotations

from typing import Any


def _with_port(address: str, port: str | None, host: str | None = None) -> str:
    if not port and not host:
        return address
    old_host, _, old_port = address.rpartition(":") if ":" in address else (address, "", "6543")
    return f"{host or old_host}:{int(port or old_port)}"


def waitress(app: Any, global_conf: dict[str, Any], **local: Any) -> Any:
    from waitress import serve_paste

    local["listen"] = _with_port(local.get("listen", "127.0.0.1:6543"), global_conf.get("http_port"))
    return serve_paste(app, global_conf, **local)


def gunicorn(app: Any, global_conf: dict[str, Any], **local: Any) -> Any:
    from gunicorn.app.pasterapp import serve

    local["bind"] = _with_port(local.get("bind", "127.0.0.1:6543"), global_conf.get("http_port"),
                               global_conf.get("http_host"))
    for key in ("forwarded_allow_ips", "workers"):
        if global_conf.get(key):
            local[key] = global_conf[key]
    return serve(app, global_conf, **local)
