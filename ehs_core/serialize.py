"""Small JSON helpers shared by the resources."""

from __future__ import annotations

import datetime as dt


def iso(moment: dt.datetime | dt.date | None) -> str | None:
    if moment is None:
        return None
    return moment.isoformat().replace("+00:00", "Z")
