"""The incident list's total from the `status` tallies.

The list of a caller who sees every incident, narrowed by type, site and
status (the everyday queues: "my site's open incidents"), counted its
matches through an index of the incidents, entry by entry (and with heap
fetches after recent writes, until autovacuum).
The `status` tallies (month 0, k1 the status, one row per site, type,
status and shard: see models.Tally) hold the same count, kept in the
transaction of every change that moves it (`tallies`), so the sum of a few
rows answers instead (`config.add_incident_total`).

Exact or nothing: the sum is NULL, and the list counts in the same
statement, when the organization's tallies were never built (no
TallyState row, e.g. migrated without the application; rebuilding writes
it). The zone a TallyState was counted in does not matter here: a status
is not placed in a month. `ready` declines in a request that changed
incidents itself: its tallies move only as it commits. What this cannot
see is a period when the application ran with the plugin disabled (its
changes moved no tally): as for the statistics, rebuild the tallies after
one (`python -m ehs_plugins.analytics.tallies CONFIG.ini`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pyramid.config import Configurator
from pyramid.request import Request
from sqlalchemy import BigInteger, ColumnElement, case, cast, exists, func, literal_column, select

from ehs_plugins.analytics.counted_state import ALL_TIME
from ehs_plugins.analytics.models import Tally, TallyState
from ehs_plugins.analytics.tallies import counts_pending

# The list's filters (the core's, by name) the status tallies answer, and the
# tally column each one's values are compared with.
ANSWERED = {"type": Tally.type, "siteId": Tally.site_id, "status": Tally.k1}


def status_total(filters: Mapping[str, Sequence[ColumnElement[Any]]],
                 organization: ColumnElement[int]) -> ColumnElement[Any] | None:
    """How many incidents of the organization the filters keep, from the
    status tallies, or NULL when its tallies were never built; None
    (declined) when a filter is not one of ANSWERED or none is used (the
    core has the whole organization's total from its numbers)."""
    if not filters or not set(filters) <= ANSWERED.keys():
        return None
    built = exists().where(TallyState.organization_id == organization)
    # The constants written into the SQL: nothing more to bind per request.
    summed = select(cast(func.coalesce(func.sum(Tally.n), literal_column("0")), BigInteger)).where(
        Tally.organization_id == organization, Tally.kind == literal_column("'status'"),
        Tally.month == literal_column(str(int(ALL_TIME))),
        *(ANSWERED[name].in_(values) for name, values in filters.items())).scalar_subquery()
    return case((built, summed))


def no_pending_counts(request: Request) -> bool:
    """The request has no change of its own waiting to move the tallies."""
    return not counts_pending(request)


def includeme(config: Configurator) -> None:
    config.add_incident_total("analytics.status", status_total, ready=no_pending_counts)
