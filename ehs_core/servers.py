"""Paste server runners for `pserve`: waitress (development.ini) and
gunicorn (production.ini), honouring `pserve CONFIG http_port=NNNN` and, for
gunicorn, `http_host=ADDRESS` (a web host of a several-host deployment
listens on its private address, where the balancer reaches it) and
`forwarded_allow_ips=ADDRESS,…` (the balancer whose X-Forwarded-* headers
are believed) and `workers=N` (sized to the host's cores).

A value in the ini's [DEFAULT] section would override the command line's
variables (configparser reads the file after its defaults), so the port is
taken from the command line here and otherwise from the server section.

`forwarded_allow_ips` is also where the client's address comes from: gunicorn
believes X-Forwarded-Proto only from those peers, and `ForwardedClient` puts
the client named by their X-Forwarded-For into REMOTE_ADDR, which is all the
application reads (the sign-in limiter's per-address bound). From any other
peer the header is ignored, so a client cannot choose its own address.
"""

from __future__ import annotations

import ipaddress
import os
from collections.abc import Callable, Iterable
from typing import Any

Network = ipaddress.IPv4Network | ipaddress.IPv6Network

# Where `ForwardedClient` leaves the trusted proxy's own address once
# REMOTE_ADDR names the client (read as `request.proxy_address`, intake.py).
PROXY_ADDR = "ehs.proxy_addr"


class ForwardedClient:
    """WSGI middleware: REMOTE_ADDR becomes the client a trusted proxy names.

    X-Forwarded-For is read right to left, each proxy having appended the
    address it received the request from; the first address that is not a
    trusted proxy is the client. Entries further left were written by the
    client itself and are never used. `*` trusts any peer but still only one
    hop: the address the nearest proxy saw.
    """

    def __init__(self, app: Callable[..., Any], trusted: str) -> None:
        self.app = app
        self.any_peer = "*" in (t.strip() for t in trusted.split(","))
        self.trusted: list[Network] = [ipaddress.ip_network(t.strip(), strict=False)
                                       for t in trusted.split(",") if t.strip() and t.strip() != "*"]

    def is_trusted(self, address: str) -> bool:
        try:
            ip = ipaddress.ip_address(address.strip())
        except ValueError:
            return False
        return any(ip in network for network in self.trusted)

    def client(self, peer: str, forwarded: str) -> str:
        if not (self.any_peer or self.is_trusted(peer)):
            return peer
        for hop in reversed([h.strip() for h in forwarded.split(",") if h.strip()]):
            try:
                ipaddress.ip_address(hop)
            except ValueError:
                break  # not an address a proxy of ours wrote: believe nothing further
            if self.any_peer or not self.is_trusted(hop):
                return hop
        return peer

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        forwarded = environ.get("HTTP_X_FORWARDED_FOR")
        peer = environ.get("REMOTE_ADDR", "")
        if forwarded and peer:
            client = self.client(peer, forwarded)
            if client != peer:
                environ[PROXY_ADDR] = peer
                environ["REMOTE_ADDR"] = client
        return self.app(environ, start_response)


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
    registry = getattr(app, "registry", None)
    if registry is not None:
        from ehs_core.jobs import before_forking

        before_forking(registry)  # the workers run the jobs, each with its own connections
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        local.setdefault("child_exit", "ehs_core.metrics.child_exit")  # GET /metrics sums live workers
    # gunicorn's own default for the setting, so both uses agree.
    trusted = local.get("forwarded_allow_ips") or os.environ.get("FORWARDED_ALLOW_IPS", "127.0.0.1,::1")
    return serve(ForwardedClient(app, trusted), global_conf, **local)
