"""Where a webhook may be sent: the rule against server-side request forgery
(OWASP SSRF Prevention Cheat Sheet; ASVS 5 1.3.6 / 4.0.3 12.6.1). The
target must be `https` (or a host of the `webhooks.http_hosts` allow-list),
and every address its name resolves to must be a public one: private,
loopback, link-local (the cloud metadata service at 169.254.169.254),
shared, multicast and reserved addresses are refused, unless
`EHS_WEBHOOK_ALLOW_PRIVATE` says otherwise. The name is resolved once per
attempt, every address is checked, and the connection goes to a checked
address (a name that resolves elsewhere the second time, DNS rebinding,
gains nothing). Redirects are not followed.
"""

from __future__ import annotations

import ipaddress
import socket
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit


class TargetRefused(ValueError):
    """A webhook URL the service will not call; the message says why."""


@dataclass(frozen=True)
class Target:
    scheme: str
    host: str
    port: int
    path: str
    addresses: tuple[str, ...]

    @property
    def host_header(self) -> str:
        default = {"https": 443, "http": 80}[self.scheme]
        name = f"[{self.host}]" if ":" in self.host else self.host
        return name if self.port == default else f"{name}:{self.port}"


def parse(url: str, http_hosts: frozenset[str]) -> tuple[str, str, int, str]:
    """(scheme, host, port, path with query) of an acceptable URL."""
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError as exc:
        raise TargetRefused("Must be a URL such as https://hooks.example.com/ehs") from exc
    host = (parts.hostname or "").lower()
    if parts.scheme not in {"https", "http"} or not host:
        raise TargetRefused("Must be a URL such as https://hooks.example.com/ehs")
    if parts.username or parts.password:
        raise TargetRefused("Must not carry a user name or password")
    if parts.fragment:
        raise TargetRefused("Must not have a #fragment")
    if parts.scheme == "http" and host not in http_hosts:
        raise TargetRefused("Must use https")
    port = port or (443 if parts.scheme == "https" else 80)
    path = parts.path or "/"
    if parts.query:
        path += "?" + parts.query
    return parts.scheme, host, port, path


def is_public(address: str) -> bool:
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return ip.is_global and not ip.is_multicast


def resolve(url: str, http_hosts: frozenset[str], allow_private: bool) -> Target:
    """The target with the addresses it may be reached at; TargetRefused if
    none, or if any address is not public (a name with one private address
    among public ones is refused whole: which one is used is not ours)."""
    scheme, host, port, path = parse(url, http_hosts)
    try:
        found: list[Any] = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as exc:
        raise TargetRefused(f"The name {host} cannot be resolved") from exc
    addresses = tuple(dict.fromkeys(info[4][0] for info in found))
    if not addresses:
        raise TargetRefused(f"The name {host} cannot be resolved")
    if not allow_private and not all(is_public(a) for a in addresses):
        raise TargetRefused("Must not be a private, loopback or link-local address")
    return Target(scheme, host, port, path, addresses)
