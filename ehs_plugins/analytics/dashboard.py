"""The analytics dashboard at /analytics: what waits now (the overview's
open incidents and actions, `stats.open_work`), a period picker with the
previous period beside each figure, and charts drawn on the server (trend,
type and severity, site and area, root causes, the weekday-by-hour heatmap
in each site's zone, actions on time or late, and injury rates and the
injured people per part of the body for those who may see them), each with
its numbers in a table. A bar opens the incident list with that bar's
filter. The figures are the API's (`views.analytics_answer`,
`stats.open_work`): the same rules decide who sees what."""

from __future__ import annotations

import datetime as dt
from typing import Any
from urllib.parse import urlencode

import colander
from pyramid.config import Configurator
from pyramid.request import Request

from ehs_core.actions import today
from ehs_core.errors import DomainError, invalid
from ehs_core.incidents.models import IncidentType, Severity
from ehs_core.security import Permission
from ehs_core.sites.services import site_choices, site_index
from ehs_core.ui.forms import errors_of
from ehs_plugins.analytics import charts, stats
from ehs_plugins.analytics.pages import saved_view_links
from ehs_plugins.analytics.views import analytics_answer, analytics_schema

PRESETS = {"30": "Last 30 days", "90": "Last 90 days", "year": "This year", "last-year": "Last year"}
KPI_LABELS = {
    "reported": "Incidents reported", "nearMisses": "Near misses", "hazards": "Hazards reported",
    "actionsClosedOnTimeRate": "Actions closed on time (%)", "averageDaysToClose": "Average days to close",
    "injuries": "Injuries", "illnesses": "Illnesses", "recordableCases": "Recordable cases",
    "daysAway": "Days away from work",
}
WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")


def preset_period(preset: str, on: dt.date) -> tuple[dt.date, dt.date]:
    if preset == "30":
        return on - dt.timedelta(days=29), on
    if preset == "year":
        return dt.date(on.year, 1, 1), on
    if preset == "last-year":
        return dt.date(on.year - 1, 1, 1), dt.date(on.year - 1, 12, 31)
    return on - dt.timedelta(days=89), on


def chosen(request: Request) -> dict[str, Any]:
    """The query as typed: a preset, or from/to, and the optional filters."""
    on = today(request.registry)
    preset = request.GET.get("period", "")
    first, last = preset_period(preset if preset in PRESETS else "90", on)
    values = {"from": first.isoformat(), "to": last.isoformat(), "period": preset}
    if preset not in PRESETS and (request.GET.get("from") or request.GET.get("to")):
        values.update({"from": request.GET.get("from", ""), "to": request.GET.get("to", ""), "period": ""})
    for key in ("siteId", "type"):
        raw = request.GET.get(key, "")
        values[key] = raw if raw else None
    return values


def list_link(base: str, filters: dict[str, Any], **extra: Any) -> str:
    """The incident list (its path `base`, found once per page) with the
    dashboard's filters and a bar's own."""
    query = [(k, v) for k, v in {**filters, **extra}.items() if v not in (None, "")]
    return f"{base}?{urlencode(query)}" if query else base


def trend_chart(base: str, data: dict[str, Any], filters: dict[str, Any]) -> dict[str, Any]:
    trend, last = data["trend"], dt.date.fromisoformat(data["to"])
    items = []
    for i, bucket in enumerate(trend):
        start = dt.date.fromisoformat(bucket["start"])
        end = (dt.date.fromisoformat(trend[i + 1]["start"]) - dt.timedelta(days=1)) if i + 1 < len(trend) \
            else last
        items.append((start.strftime("%d %b" if data["granularity"] == "week" else "%b %Y"), bucket["count"],
                      list_link(base, {**filters, "from": start.isoformat(), "to": end.isoformat()})))
    return charts.bars(items)


def dashboard(request: Request) -> dict[str, Any]:
    values = chosen(request)
    every_site = site_choices(request, include_archived=True)
    errors: dict[str, str] = {}
    data = None
    try:
        query = analytics_schema(request.registry).deserialize(
            {k: values[k] for k in ("from", "to", "siteId", "type") if values[k] is not None})
        query.setdefault("siteId", None)
        query.setdefault("type", None)
        # A shared address may name a site archived since (its figures still
        # count), or no site of the organization at all (which was a 500).
        if query["siteId"] is not None and query["siteId"] not in {site["id"] for site in every_site}:
            raise invalid("siteId", "There is no such site")
        data = analytics_answer(request, query)
    except (colander.Invalid, DomainError) as exc:
        errors = errors_of(exc)
        request.response.status = 400
    chosen_site = values["siteId"] if not errors.get("siteId") else None
    sites = [site for site in every_site if not site["archived"] or str(site["id"]) == chosen_site]
    values_out = {"values": values, "errors": errors, "presets": PRESETS, "sites": sites,
                  "types": list(IncidentType), "severities": list(Severity),
                  "overview": stats.open_work(request), "weekdays": WEEKDAYS,
                  "kpi_labels": {k: request.localizer.translate(v, domain="ehs_analytics")
                                 for k, v in KPI_LABELS.items()},
                  "views": saved_view_links(request)}
    if data is None:
        return {**values_out, "data": None}
    filters = {"from": data["from"], "to": data["to"], "siteId": values["siteId"], "type": values["type"]}
    base = request.route_path("page.incidents")
    by_type: dict[str, int] = {}
    by_severity: dict[str, int] = {}
    grid: dict[tuple[str, str], int] = {}
    for row in data["byTypeAndSeverity"]:
        by_type[row["type"]] = by_type.get(row["type"], 0) + row["count"]
        by_severity[row["severity"]] = by_severity.get(row["severity"], 0) + row["count"]
        grid[(row["type"], row["severity"])] = row["count"]
    t = request.localizer.translate
    type_items = [(t(kind.value.replace("_", " ").capitalize()), by_type.get(kind, 0),
                   list_link(base, filters, type=kind.value)) for kind in IncidentType]
    severity_items = [(t(level.value.capitalize()), by_severity.get(level, 0),
                       list_link(base, filters, severity=level.value)) for level in Severity]
    places = data["locations"][:10]
    # An area by its path ("Building A / Yard"), before its site: the chart
    # cuts long labels at their end, where three sites' "Yard" read the same.
    areas = site_index(request)["area"]

    def place(p: dict[str, Any]) -> str:
        if not p["areaName"]:
            return p["siteName"]
        return f"{areas[p['areaId']]['path'] if p['areaId'] in areas else p['areaName']} · {p['siteName']}"

    place_items = [(place(p), p["count"], list_link(base, filters, siteId=p["siteId"], areaId=p["areaId"]))
                   for p in places]
    # A category is the investigator's own words ("People / PPE"), shown as typed.
    cause_items = [(c["category"], c["count"], None) for c in data["rootCauses"]]
    actions = data["actions"]
    action_items = [(t("On time"), actions["onTime"], None), (t("Late"), actions["late"], None),
                    (t("Not yet due"), actions["pending"], None)]
    # Injured or ill people per part of the body (record keepers only: the
    # answer has `byBodyPart` only for them, see stats.by_body_part).
    body_items = [(part["title"] or t("Not coded yet"), part["count"], None)
                  for part in data.get("byBodyPart", [])]
    heat = data["heatmap"]["counts"]
    busiest = max(((d, h, c) for d, day in enumerate(heat) for h, c in enumerate(day)),
                  key=lambda cell: cell[2], default=None)
    return {**values_out, "data": data, "filters": filters,
            "trend": trend_chart(base, data, filters),
            "by_type": charts.bars(type_items, height=200), "type_items": type_items,
            "by_severity": charts.bars(severity_items, height=200), "severity_items": severity_items,
            "grid": grid, "places": charts.hbars(place_items, label_width=260), "place_items": place_items,
            "causes": charts.hbars(cause_items), "cause_items": cause_items,
            "actions_chart": charts.hbars(action_items, label_width=120), "action_items": action_items,
            "body_chart": charts.hbars(body_items, label_width=260), "body_items": body_items,
            "heat": charts.heatmap(heat), "busiest": busiest if busiest and busiest[2] else None,
            "list_link": lambda **extra: list_link(base, filters, **extra)}


def includeme(config: Configurator) -> None:
    config.add_route("page.analytics", "/analytics")
    config.add_view(dashboard, route_name="page.analytics", request_method="GET",
                    renderer="ehs_plugins.analytics:templates/dashboard.html",
                    permission=Permission.signed_in)
    config.add_nav_item("analytics", "Analytics", "page.analytics", permission=Permission.signed_in, order=50)
    config.add_static_view("analytics-static", "ehs_plugins.analytics:static", cache_max_age=3600)
