"""The establishment's own clock (`ehs_core.zones`), by the name the sites'
callers know it by, and the zones a site's picker offers."""

from __future__ import annotations

import functools
from zoneinfo import available_timezones

from ehs_core.zones import local_time, server_zone, site_zone

__all__ = ["US_ZONES", "local_time", "server_zone", "site_zone", "zone_choices"]

# The zones of US establishments, offered first (29 CFR 1904 binds US
# employers); every other IANA zone follows.
US_ZONES = ("America/New_York", "America/Chicago", "America/Denver", "America/Phoenix",
            "America/Los_Angeles", "America/Anchorage", "Pacific/Honolulu", "America/Puerto_Rico",
            "Pacific/Guam")


@functools.cache
def zone_choices() -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(the US zones, every other IANA zone by name) for a site's zone
    picker: a typed zone name was the first day's most common mistake."""
    others = sorted(name for name in available_timezones()
                    if "/" in name and not name.startswith(("Etc/", "SystemV/", "posix/", "right/"))
                    and name not in US_ZONES)
    return US_ZONES, tuple(others)
