"""Seeded incidents before they are written: when and where each
happened, its type, severity and status, and the moments of the workflow
steps its status implies."""

from __future__ import annotations

import datetime as dt
import random
from dataclasses import dataclass, field
from typing import Any
from zoneinfo import ZoneInfo

from ehs_core.incidents.models import IncidentType, Severity, Status
from ehs_core.security import Role
from ehs_core.seed.context import SeedContext
from ehs_core.seed.vocabulary import (
    DESCRIPTIONS,
    HOUR_WEIGHTS,
    IMMEDIATE,
    LOCATION_DETAILS,
    SEVERITY_WEIGHTS,
    STATUS_BY_AGE,
    TITLES,
    TYPE_WEIGHTS,
    client_uuid,
    weighted,
)
from ehs_core.sites.models import Site


@dataclass(slots=True)
class Draft:
    """An incident before it is written, with the events of its history."""

    occurred_at: dt.datetime
    offset: int
    site: Site
    type: str = ""
    severity: str = ""
    status: str = ""
    row: dict[str, Any] = field(default_factory=dict)
    path: list[tuple[str, dt.datetime]] = field(default_factory=list)
    lead: int | None = None


def occurrence(rng: random.Random, start: dt.datetime, now: dt.datetime, zone: ZoneInfo) -> dt.datetime:
    span = (now - start).total_seconds()
    for _ in range(3):
        day = (start + dt.timedelta(seconds=rng.random() * span)).astimezone(zone)
        if day.weekday() < 5 or rng.random() < 0.35:  # fewer reports at weekends
            break
    hour = rng.choices(range(24), HOUR_WEIGHTS)[0]
    local = dt.datetime(day.year, day.month, day.day, hour, rng.randrange(60), tzinfo=zone)
    moment = local.astimezone(dt.UTC)
    if moment >= now:
        moment = now - dt.timedelta(minutes=rng.randrange(5, 240))
    return max(moment, start)


def status_for(rng: random.Random, age: dt.timedelta) -> str:
    for limit, weights in STATUS_BY_AGE:
        if limit is None or age.days < limit:
            return weighted(rng, weights)
    raise AssertionError("unreachable")


def workflow_path(rng: random.Random, status: str, severity: str) -> list[str]:
    """The statuses an incident went through to reach `status` (in order, after 'reported')."""
    investigate = rng.random() < 0.75
    to_actions = ["triage", "investigation", "actions"] if investigate else ["triage", "actions"]
    if status == Status.reported:
        return []
    if status == Status.triage:
        return ["triage"]
    if status == Status.investigation:
        return ["triage", "investigation"]
    if status == Status.actions:
        return to_actions
    if status == Status.verification:
        return [*to_actions, "verification"]
    if severity in (Severity.low, Severity.medium) and rng.random() < 0.45:
        return ["triage", "closed"]
    return [*to_actions, "verification", "closed"]


def timed(rng: random.Random, created: dt.datetime, now: dt.datetime,
          steps: list[str]) -> list[tuple[str, dt.datetime]]:
    """Moments for each step after `created`, squeezed to end before now."""
    gaps = []
    for step in steps:
        if step == "triage":
            gaps.append(rng.uniform(0.5, 30) * 3600)
        elif step == "closed":
            gaps.append(rng.uniform(1, 12) * 86400)
        else:
            gaps.append(rng.uniform(0.5, 8) * 86400)
    room = (now - created).total_seconds() - 60
    total = sum(gaps)
    if total > room > 0:
        gaps = [g * room / total for g in gaps]
    elif room <= 0:
        gaps = [0.0] * len(gaps)
    moments, at = [], created
    for step, gap in zip(steps, gaps, strict=True):
        at = at + dt.timedelta(seconds=gap)
        moments.append((step, at))
    return moments


def covering_order(count: int) -> list[tuple[str, str, str]]:
    """Type, severity and status for the newest incidents, so that every
    value of each appears even in a tiny data set."""
    types, severities, statuses = list(IncidentType), list(Severity), list(Status)
    return [(types[i % len(types)], severities[i % len(severities)], statuses[i % len(statuses)])
            for i in range(min(count, 24))]


def draft_incidents(ctx: SeedContext, areas: dict[int, list[int]], first_number: int) -> list[Draft]:
    rng, now, count = ctx.rng, ctx.now, ctx.options.incidents
    zones = {site.id: ZoneInfo(site.timezone or "UTC") for site in ctx.sites}
    # Bigger sites report more.
    site_weights = [rng.uniform(0.5, 2.0) for _ in ctx.sites]
    drafts = []
    for site in rng.choices(ctx.sites, site_weights, k=count):
        zone = zones[site.id]
        moment = occurrence(rng, ctx.start, now, zone)
        offset = int(moment.astimezone(zone).utcoffset().total_seconds() // 60)
        drafts.append(Draft(moment, offset, site))
    drafts.sort(key=lambda d: d.occurred_at)
    covering = covering_order(count)
    reporters = ctx.users[Role.reporter] + ctx.users[Role.supervisor]
    for index, draft in enumerate(drafts):
        newest = count - 1 - index
        if newest < len(covering):
            draft.type, draft.severity, draft.status = covering[newest]
        else:
            draft.type = weighted(rng, TYPE_WEIGHTS)
            draft.severity = weighted(rng, SEVERITY_WEIGHTS)
            draft.status = status_for(rng, now - draft.occurred_at)
        created = min(draft.occurred_at + dt.timedelta(minutes=rng.uniform(5, 600)), now)
        steps = workflow_path(rng, draft.status, draft.severity)
        draft.path = timed(rng, created, now, steps)
        anonymous = rng.random() < 0.07
        site_areas = areas.get(draft.site.id, [])
        title = rng.choice(TITLES[draft.type])
        draft.row = {
            "organization_id": ctx.organization_id, "number": first_number + index, "title": title,
            "type": draft.type.value, "severity": draft.severity.value, "status": draft.status.value,
            "occurred_at": draft.occurred_at, "occurred_offset_minutes": draft.offset,
            "site_id": draft.site.id,
            "area_id": rng.choice(site_areas) if site_areas and rng.random() < 0.85 else None,
            "location_detail": rng.choice(LOCATION_DETAILS).format(n=rng.randrange(1, 40))
            if rng.random() < 0.8 else None,
            "description": " ".join(rng.sample(DESCRIPTIONS, rng.randrange(1, 4))),
            "immediate_action": rng.choice(IMMEDIATE) if rng.random() < 0.85 else None,
            "anonymous": anonymous, "reporter_id": None if anonymous else rng.choice(reporters),
            "client_id": client_uuid(rng, first_number + index) if rng.random() < 0.6 else None,
            "created_at": created, "updated_at": draft.path[-1][1] if draft.path else created,
            "closed_at": draft.path[-1][1] if draft.status == Status.closed else None,
        }
    return drafts
