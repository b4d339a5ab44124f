"""TRIR and DART from the OSHA plugin's cases and hours (only used when that
plugin is enabled): rolling 12 months to the end of the period, and per
calendar year. Recordable cases x 200,000 / hours worked."""

from __future__ import annotations

import datetime as dt
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from pyramid.request import Request
from sqlalchemy import and_, func, or_, select

from ehs_core.incidents.models import Incident
from ehs_plugins.osha.models import InjuryCase, SiteHours

BASE = Decimal(200_000)


def _rate(count: int, hours: Decimal) -> float | None:
    if not hours:
        return None
    return float((Decimal(count) * BASE / hours).quantize(Decimal("0.01"), ROUND_HALF_UP))


def _window(request: Request, first_month: tuple[int, int], last_month: tuple[int, int],
            site_id: int | None) -> dict[str, Any]:
    """Rates for whole months first_month..last_month (year, month), inclusive."""
    db = request.dbsession
    start = dt.datetime(first_month[0], first_month[1], 1, tzinfo=dt.UTC)
    year, month = last_month
    end = dt.datetime(year + (month == 12), month % 12 + 1, 1, tzinfo=dt.UTC)
    case_filter = [InjuryCase.recordable.is_(True), Incident.occurred_at >= start, Incident.occurred_at < end,
                   Incident.organization_id == request.identity.user.organization_id]
    hours_filter = [or_(SiteHours.year > first_month[0],
                        and_(SiteHours.year == first_month[0], SiteHours.month >= first_month[1])),
                    or_(SiteHours.year < last_month[0],
                        and_(SiteHours.year == last_month[0], SiteHours.month <= last_month[1]))]
    if site_id is not None:
        case_filter.append(Incident.site_id == site_id)
        hours_filter.append(SiteHours.site_id == site_id)
    total, dart = db.execute(
        select(func.count(), func.count().filter(InjuryCase.outcome.in_(("days_away", "restricted"))))
        .select_from(InjuryCase).join(Incident, Incident.id == InjuryCase.incident_id)
        .where(*case_filter)).one()
    hours = db.execute(select(func.coalesce(func.sum(SiteHours.hours), 0)).where(*hours_filter)).scalar()
    hours = Decimal(str(hours))
    return {"recordableCases": total, "dartCases": dart, "hours": float(hours),
            "trir": _rate(total, hours), "dart": _rate(dart, hours)}


def rates(request: Request, last: dt.date, site_id: int | None) -> dict[str, Any]:
    end_index = last.year * 12 + last.month - 1
    start_index = end_index - 11
    rolling = _window(request, (start_index // 12, start_index % 12 + 1), (last.year, last.month), site_id)
    rolling["from"] = dt.date(start_index // 12, start_index % 12 + 1, 1).isoformat()
    rolling["to"] = last.isoformat()
    yearly = []
    for year in range(last.year - 2, last.year + 1):
        item = _window(request, (year, 1), (year, 12), site_id)
        item["year"] = year
        yearly.append(item)
    return {"rolling12Months": rolling, "yearly": yearly}
