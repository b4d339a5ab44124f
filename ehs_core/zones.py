"""The establishment's own clock: the time zone in which an event at a site
happened, for every record that shows its date or time or files it under a
year.

29 CFR 1904 keeps records per establishment: Form 300 column D and Form 301
items 10-12 are the establishment's date and time of the event, and the
300A summarises one calendar year of the establishment (1904.32(a)(1)). The
offset a client happened to send with `occurredAt` says where the reporter's
device was, not where the establishment is, so records use the site's IANA
zone, and the server's zone (setting TZ) for a site without one. The
analytics heatmap's hours use the same rule.
"""

from __future__ import annotations

import datetime as dt
from zoneinfo import ZoneInfo

from pyramid.registry import Registry


def server_zone(registry: Registry) -> dt.tzinfo:
    """The server's zone (setting TZ / ehs.timezone); the process's local
    zone when none is set."""
    name = registry.settings.get("ehs.timezone")
    return ZoneInfo(name) if name else dt.datetime.now().astimezone().tzinfo


def site_zone(timezone: str | None, registry: Registry) -> dt.tzinfo:
    """The zone of a site whose `timezone` column holds `timezone`: that IANA
    zone (validated when the site was saved), else the server's zone."""
    return ZoneInfo(timezone) if timezone else server_zone(registry)


def local_time(instant: dt.datetime, timezone: str | None, registry: Registry) -> dt.datetime:
    """An aware instant as the wall-clock time of the site (see `site_zone`)."""
    return instant.astimezone(site_zone(timezone, registry))
