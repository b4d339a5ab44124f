"""Hours worked and employees per site and month (the 300A's figures and
the rates' denominator): one operation behind the API's PUT and the hours
grid page."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from sqlalchemy import delete, select
from sqlalchemy.orm import Session

from ehs_core.errors import Invalid
from ehs_core.sites.models import Site
from ehs_plugins.osha.models import SiteHours


def save_hours(dbsession: Session, site: Site, year: int, entries: list[dict[str, Any]]) -> None:
    """Set the months given (validated `HoursEntries`); a month with neither
    hours nor employees is cleared."""
    months = [entry["month"] for entry in entries]
    if len(set(months)) != len(months):
        raise Invalid("", "Each month at most once")
    existing = {row.month: row for row in dbsession.execute(select(SiteHours).where(
        SiteHours.site_id == site.id, SiteHours.year == year)).scalars()}
    for entry in entries:
        hours, average = entry["hours"], entry["averageEmployees"]
        row = existing.get(entry["month"])
        if hours is None and average is None:
            if row is not None:
                dbsession.execute(delete(SiteHours).where(SiteHours.id == row.id))
            continue
        if row is None:
            row = SiteHours(site_id=site.id, year=year, month=entry["month"])
            dbsession.add(row)
        row.hours = None if hours is None else Decimal(str(hours))
        row.average_employees = None if average is None else Decimal(str(average))
    dbsession.flush()
    dbsession.expire_all()
