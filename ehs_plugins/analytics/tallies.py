"""Tallies: the statistics' sums kept up to date as incidents change, so the
overview and the analytics of callers who see every incident read a few
thousand rows (`analytics_tallies`, see models.Tally) instead of every
incident, root cause, action and injury case of the period; the incident
list of such callers reads its total from the status tallies (`totals`).

What an incident adds is a function of its state (`counted_state`). Its
state as counted is kept beside it (`analytics_counted`); a change
computes the new state from the database and adds the difference to the
tallies (`tally_writes`), in the request's transaction, just before it
commits:

- listeners of the typed events (IncidentCreated, IncidentUpdated,
  IncidentTransitioned, RootCauseChanged, ActionCreated, ActionUpdated, the
  injury-case event the figures provider names, SiteUpdated) only note what
  changed in the request's `Pending` (`request.analytics_pending`); the
  work runs once per request, at commit, after the incident's number is
  taken, so the rows it locks are held only while the request commits;
- concurrency: the counted row of an incident is locked (`FOR UPDATE`)
  before its state is read, so two changes of one incident queue and the
  second sees the first's state; how the tallies themselves take
  concurrent writers is told in `tally_writes`;
- a site's zone change re-counts that site's incidents (`rebuild`), holding
  the counted rows' table lock for the while, so writers queue behind it;
- `ehs seed` writes in bulk without events: a seeder rebuilds everything
  once the other seeders are done (at the seed's commit);
- the analytics migration fills the tables from the rows (`rebuild`), and
  `python -m ehs_plugins.analytics.tallies CONFIG.ini` rebuilds them
  whenever in doubt (after running with the plugin disabled, or after
  changing TZ: until then statistics read the rows, see
  `stats.figures_for`). Nothing tells that the plugin was disabled for a
  while: the statistics and the list's totals are off until that rebuild."""

from __future__ import annotations

import argparse
import json
import logging
from collections import defaultdict
from collections.abc import Iterator
from typing import Any

from pyramid.config import Configurator
from pyramid.registry import Registry
from pyramid.request import Request
from sqlalchemy import select
from sqlalchemy.orm import Session

from ehs_core.db import mark_written
from ehs_core.events import (
    ActionCreated,
    ActionUpdated,
    Event,
    IncidentCreated,
    IncidentTransitioned,
    IncidentUpdated,
    OrganizationCreated,
    RootCauseChanged,
    SiteUpdated,
    before_commit,
)
from ehs_core.incidents.models import Incident
from ehs_core.sites.models import Site
from ehs_core.sites.services import site_timezone
from ehs_core.sites.zones import server_zone, site_zone
from ehs_plugins.analytics.counted_state import (
    INCIDENT_COLUMNS,
    State,
    Sums,
    difference,
    incident_fields,
    new_state,
    read_states,
)
from ehs_plugins.analytics.figures import injury_figures
from ehs_plugins.analytics.models import CountedIncident, TallyState
from ehs_plugins.analytics.months import zone_key
from ehs_plugins.analytics.rebuild import rebuild, rebuild_all, seed_tallies
from ehs_plugins.analytics.tally_writes import COUNT_REPORT, UPSERT_COLUMNS, move_tallies, store_state

log = logging.getLogger(__name__)

# The incident fields whose change moves a tally (JSON names, as in the events' changes).
COUNTED_FIELDS = frozenset({"type", "severity", "siteId", "areaId", "occurredAt"})
KEPT = object()


class Pending:
    """What changed in one request, counted at its commit (`flush`)."""

    def __init__(self, request: Request) -> None:
        self.request = request
        self.waiting = False  # a change noted, `flush` hooked to the commit
        self.created: dict[int, Incident] = {}
        self.dirty: dict[int, set[str]] = defaultdict(set)
        self.sites: set[int] = set()

    def flush(self) -> None:
        request = self.request
        session: Session = request.dbsession
        registry = request.registry
        session.flush()
        if self._count_one_report(session, registry):
            return
        for site_id in sorted(self.sites):
            organization_id = session.execute(select(Site.organization_id).where(Site.id == site_id)).scalar()
            rebuild(session, registry, organization_id, site_id=site_id)
        moved: dict[int, Sums] = defaultdict(dict)
        for organization_id, old, new in self._recount(session, registry):
            for key, values in difference(old, new).items():
                item = moved[organization_id].setdefault(key, [0, 0, 0])
                for i, value in enumerate(values):
                    item[i] += value
        for organization_id in sorted(moved):
            move_tallies(session, organization_id,
                         {key: values for key, values in moved[organization_id].items() if any(values)})

    def _count_one_report(self, session: Session, registry: Registry) -> bool:
        """A request that filed one report and changed nothing else (the
        common write), on PostgreSQL: its counted state and the tallies it
        adds to in one statement (`COUNT_REPORT`). False when that does not apply or the site's zone changed
        since it was read (then `_recount` places the report again)."""
        if (self.sites or len(self.created) != 1 or set(self.dirty) - set(self.created)
                or any(self.dirty.values()) or session.get_bind().dialect.name != "postgresql"):
            return False
        (incident_id, incident), = self.created.items()
        zone = site_timezone(self.request, incident.site_id)  # no statement for a signed-in caller
        state = new_state(incident, site_zone(zone, registry))
        rows = [dict(zip(UPSERT_COLUMNS, (*key, *values), strict=True))
                for key, values in sorted(difference(None, state).items())]
        organization_id = incident.organization_id
        written = session.connection().execute(COUNT_REPORT, {
            "incident_id": incident_id, "organization_id": organization_id, "site_id": incident.site_id,
            "state": json.dumps(state), "zone": zone, "rows": json.dumps(rows)}).first()
        mark_written(session)
        if written is None:
            log.warning("incident %s was counted by another request meanwhile", incident_id)
        elif written.zone != zone:
            # The site's zone changed since it was read: stored, but the
            # tallies not moved; placed in the zone stored, as `store_state` does.
            state = {**state, **incident_fields(incident, site_zone(written.zone, registry))}
            store_state(session, organization_id, incident_id, state, True)
            move_tallies(session, organization_id, difference(None, state))
        return True

    def _recount(self, session: Session, registry: Registry) -> Iterator[tuple[int, State | None, State]]:
        """(organization, state as counted, new state) of each incident
        changed in the request, its new state stored."""
        existing = sorted(set(self.dirty) - set(self.created))
        counted: dict[int, Any] = {}
        if existing:
            # Lock what is counted of each incident (in id order): a
            # concurrent change of the same incident waits for this commit
            # and then reads this one's state. The incident's row is this
            # request's own (flushed) version when its fields changed; its
            # site's zone is checked again when the state is stored.
            counted = {row.incident_id: row for row in session.execute(
                select(CountedIncident.incident_id, CountedIncident.state, *INCIDENT_COLUMNS, Site.timezone)
                .join(Incident, Incident.id == CountedIncident.incident_id)
                .join(Site, Site.id == Incident.site_id)
                .where(CountedIncident.incident_id.in_(existing)).order_by(CountedIncident.incident_id)
                .with_for_update(of=CountedIncident))}
        for incident_id, incident in sorted(self.created.items()):
            zone = site_timezone(self.request, incident.site_id)  # no statement for a signed-in caller
            state = new_state(incident, site_zone(zone, registry))
            if self.dirty.get(incident_id):  # rows added to it in the same request
                children = self.dirty[incident_id] - {"incident"}
                state.update(read_states(session, registry, Incident.id == incident_id, children,
                                         ids=[incident_id])[incident_id])
            stored = self._store(session, registry, incident, state, exists=False, placed_in=zone)
            if stored is not None:
                yield incident.organization_id, None, stored
        for incident_id in existing:
            row = counted.get(incident_id)
            if row is None:  # never counted (the plugin was disabled meanwhile): count it whole
                state = read_states(session, registry, Incident.id == incident_id)[incident_id]
                incident = session.get(Incident, incident_id)
                stored = self._store(session, registry, incident, state, exists=False,
                                     placed_in=session.get(Site, incident.site_id).timezone)
                if stored is not None:
                    yield incident.organization_id, None, stored
                continue
            sources = self.dirty[incident_id]
            state = dict(row.state)
            if "incident" in sources:
                state.update(incident_fields(row, site_zone(row.timezone, registry)))
            children = sources - {"incident"}
            if children:
                state.update(read_states(session, registry, Incident.id == incident_id, children,
                                         ids=[incident_id])[incident_id])
            stored = self._store(session, registry, row, state, exists=True,
                                 placed_in=row.timezone if "incident" in sources else KEPT)
            yield row.organization_id, row.state, stored

    def _store(self, session: Session, registry: Registry, incident: Any, state: State, *, exists: bool,
               placed_in: Any) -> State | None:
        """Store `state`, whose incident fields were placed in the site zone
        `placed_in` (KEPT: taken from the stored state, placed in the zone
        stored with it); if the site's zone turns out to have changed
        meanwhile, place the incident again."""
        written = store_state(session, incident.organization_id, incident.id, state, exists)
        if written is None:
            log.warning("incident %s was counted by another request meanwhile", incident.id)
            return None
        if placed_in is not KEPT and written.zone != placed_in:
            state = {**state, **incident_fields(incident, site_zone(written.zone, registry))}
            store_state(session, incident.organization_id, incident.id, state, True)
        return state

def analytics_pending(request: Request) -> Pending:
    """Request method (reified): the request's changes the tallies have not
    counted yet. Per request object, so the next attempt of a request that
    pyramid_retry runs again (a serialization failure, a dropped
    connection) starts with none: an earlier attempt's were rolled back
    with its transaction, never reaching the tallies. The style guide's
    rule: per-request state through Pyramid's request methods, never
    values parked in `request.environ`."""
    return Pending(request)


def pending(request: Request) -> Pending:
    """The request's pending counts, flushed just before it commits (the
    hook is added with the first change)."""
    found: Pending = request.analytics_pending
    if not found.waiting:
        found.waiting = True
        before_commit(request, found.flush)
    return found


def counts_pending(request: Request) -> bool:
    """This request changed what the tallies count, not moved yet (they
    move as it commits)."""
    return request.analytics_pending.waiting


def incident_created(event: IncidentCreated) -> None:
    pending(event.request).created[event.incident.id] = event.incident


def incident_updated(event: IncidentUpdated) -> None:
    if COUNTED_FIELDS & set(event.changes):
        pending(event.request).dirty[event.incident.id].add("incident")


def incident_transitioned(event: IncidentTransitioned) -> None:
    pending(event.request).dirty[event.incident.id].add("incident")


def root_cause_changed(event: RootCauseChanged) -> None:
    pending(event.request).dirty[event.incident_id].add("cause")


def action_changed(event: ActionCreated | ActionUpdated) -> None:
    pending(event.request).dirty[event.incident.id].add("action")


def case_changed(event: Event) -> None:
    """The injury figures' provider names the events that change an
    incident's cases (`changed_by`; each has the `incident`)."""
    figures = injury_figures(event.request.registry)
    if figures is not None and figures.changed_by and isinstance(event, figures.changed_by):
        pending(event.request).dirty[event.incident.id].add("case")


def site_updated(event: SiteUpdated) -> None:
    if "timezone" in event.changes:
        pending(event.request).sites.add(event.site.id)


def organization_created(event: OrganizationCreated) -> None:
    """A new organization has nothing to count: its (empty) tallies are complete."""
    session = event.request.dbsession
    session.flush()
    session.add(TallyState(organization_id=event.organization.id,
                           server_zone=zone_key(server_zone(event.request.registry))))


def main(argv: list[str] | None = None) -> int:
    """`python -m ehs_plugins.analytics.tallies CONFIG.ini`: rebuild every
    organization's tallies from the rows, in one transaction."""
    from pyramid.paster import get_appsettings, setup_logging

    from ehs_core.config import configure

    parser = argparse.ArgumentParser(prog="python -m ehs_plugins.analytics.tallies", description=main.__doc__)
    parser.add_argument("config", help="path to the ini file")
    args = parser.parse_args(argv)
    setup_logging(args.config)
    registry = configure(dict(get_appsettings(args.config))).registry
    with registry["dbsession_factory"]() as session, session.begin():
        counted = rebuild_all(session, registry)
    print(f"tallies rebuilt from {counted} incidents")
    return 0


def includeme(config: Configurator) -> None:
    config.add_request_method(analytics_pending, "analytics_pending", reify=True)
    for listener, event_type in (
            (incident_created, IncidentCreated), (incident_updated, IncidentUpdated),
            (incident_transitioned, IncidentTransitioned), (root_cause_changed, RootCauseChanged),
            (action_changed, ActionCreated), (action_changed, ActionUpdated),
            (site_updated, SiteUpdated), (organization_created, OrganizationCreated),
            # Any event: the injury figures' provider (registered at commit,
            # maybe by a plugin included later) names its own.
            (case_changed, Event)):
        config.add_subscriber(listener, event_type)
    config.add_seeder("analytics", seed_tallies)


if __name__ == "__main__":
    raise SystemExit(main())
