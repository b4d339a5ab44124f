"""Counting the tallies again from the rows: the whole organization (the
analytics migration, `ehs seed`, and `python -m ehs_plugins.analytics.tallies
CONFIG.ini` whenever in doubt: after running with the plugin disabled, or
after changing TZ), or one site whose zone changed (its incidents fall in
other local months and hours)."""

from __future__ import annotations

import logging
from typing import Any

from pyramid.registry import Registry
from sqlalchemy import delete, event, select, text
from sqlalchemy.orm import Session

from ehs_core.incidents.models import Incident
from ehs_core.seed import bulk_insert
from ehs_core.sites.models import Site
from ehs_core.sites.zones import server_zone
from ehs_core.users.models import Organization
from ehs_plugins.analytics.counted_state import State, Sums, contributions, read_states
from ehs_plugins.analytics.models import CountedIncident, Tally, TallyState
from ehs_plugins.analytics.months import zone_key
from ehs_plugins.analytics.tally_writes import move_tallies

log = logging.getLogger(__name__)

BATCH = 5_000


def rebuild(session: Session, registry: Registry, organization_id: int, *, site_id: int | None = None) -> int:
    """Count the organization's incidents (or one site's) again from the
    rows, in the session's transaction; returns how many. Writers of counts
    wait meanwhile (PostgreSQL: a lock on the counted rows' table; SQLite
    has one writer at a time anyway). A site's incidents are taken out of
    the tallies as they were counted and put back as they are now (some
    tallies sum several sites); an organization's tallies are written anew."""
    postgresql = session.get_bind().dialect.name == "postgresql"
    if postgresql:
        session.execute(text("LOCK TABLE analytics_counted IN EXCLUSIVE MODE"))
    session.flush()
    chosen = Incident.organization_id == organization_id
    if site_id is not None:
        chosen = chosen & (Incident.site_id == site_id)
    zones = dict(session.execute(select(Site.id, Site.timezone)
                                 .where(Site.organization_id == organization_id)).all())
    states = read_states(session, registry, chosen)
    sums: Sums = {}

    def add(state: State, sign: int) -> None:
        for key, values in contributions(state).items():
            item = sums.setdefault(key, [0, 0, 0])
            for i, value in enumerate(values):
                item[i] += sign * value

    for state in states.values():
        add(state, 1)
    if site_id is None:
        session.execute(delete(Tally).where(Tally.organization_id == organization_id))
        session.execute(delete(CountedIncident).where(CountedIncident.organization_id == organization_id))
    else:
        counted = CountedIncident.incident_id.in_(select(Incident.id).where(chosen))
        for state in session.execute(select(CountedIncident.state).where(counted)).scalars():
            add(state, -1)
        session.execute(delete(CountedIncident).where(counted))
    # One row an incident: by COPY on PostgreSQL (the core's bulk writer),
    # a million of them at the end of `ehs seed` (issue #42 item 7).
    bulk_insert(session, CountedIncident, [
        {"incident_id": incident_id, "organization_id": organization_id,
         "zone": zones.get(state["s"]), "state": state}
        for incident_id, state in states.items()], BATCH, copy=True)
    moved = sorted((key, values) for key, values in sums.items() if any(values))
    for offset in range(0, len(moved), BATCH):
        batch = dict(moved[offset:offset + BATCH])
        if site_id is None:
            bulk_insert(session, Tally, [
                {"organization_id": organization_id, "kind": kind, "month": month, "site_id": site,
                 "type": type_, "k1": k1, "k2": k2, "n": n, "total": total, "closed": closed}
                for (kind, month, site, type_, k1, k2), (n, total, closed) in batch.items()],
                BATCH, copy=True)
        else:
            move_tallies(session, organization_id, batch)
    if site_id is None:
        session.execute(delete(TallyState).where(TallyState.organization_id == organization_id))
        session.add(TallyState(organization_id=organization_id, server_zone=zone_key(server_zone(registry))))
        session.flush()
        if postgresql:  # fresh planner statistics for the new rows
            session.execute(text("ANALYZE analytics_tallies"))
            session.execute(text("ANALYZE analytics_counted"))
    log.info("tallies of organization %s%s rebuilt from %d incidents", organization_id,
             f" site {site_id}" if site_id is not None else "", len(states))
    return len(states)


def rebuild_all(session: Session, registry: Registry) -> int:
    """Rebuild the tallies of every organization; returns the incidents counted."""
    organizations = session.execute(select(Organization.id).order_by(Organization.id)).scalars().all()
    return sum(rebuild(session, registry, organization_id) for organization_id in organizations)


def seed_tallies(ctx: Any) -> dict[str, int]:
    """Seeder for `ehs seed`: the seeded rows come in bulk, without events;
    count them once every seeder has written its rows (at the seed's commit)."""
    done = []

    def count(session: Session) -> None:
        if not done and not session.in_nested_transaction():
            done.append(rebuild(session, ctx.registry, ctx.organization_id))

    event.listen(ctx.session, "before_commit", count)
    return {}
