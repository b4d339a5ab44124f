"""The incident list's total from the status tallies
(ehs_plugins.analytics.totals): for a caller who sees every incident and
filters by type, site and status, the list's `total` is the sum of the
tallies, and it must always be the count of the filtered incidents: after
any change, with the tallies never built (counted instead), and for
callers and filters the tallies do not answer (counted as before)."""

from __future__ import annotations

import itertools
import random
from typing import Any

import pytest
from sqlalchemy import delete, func, select, update

from ehs_core import caches
from ehs_core.incidents import listing
from ehs_core.incidents.models import Incident
from ehs_plugins.analytics import counted_state, tallies, totals
from ehs_plugins.analytics.models import Tally, TallyState
from tests.plugins.analytics import (
    ADMIN_EMAIL,
    INCIDENTS,
    STATUSES,
    app_with_plugins,
    move,
    new_site,
    recount,
    report,
    signed_in,
)
from tests.plugins.analytics.test_tallies import TYPES, World, moment

SOME_TYPES = ("injury", "hazard", "near_miss")


def total(browser: Any, query: dict[str, Any]) -> int:
    return browser.get(INCIDENTS, params=query, status=200).json["total"]


def counted(dbsession: Any, query: dict[str, Any]) -> int:
    """The filtered incidents, counted from the rows (one organization in each test)."""
    columns = {"type": Incident.type, "siteId": Incident.site_id, "status": Incident.status,
               "severity": Incident.severity}
    conditions = [columns[name].in_(values if isinstance(values, list) else [values])
                  for name, values in query.items() if name in columns]
    return dbsession.execute(select(func.count()).select_from(Incident).where(*conditions)).scalar()


def filter_sets(rng: random.Random, sites: list[int]) -> list[dict[str, Any]]:
    """Every combination of type, site and status, with one value or several
    (and some the tallies do not answer: severity, a later page)."""
    choices = {"type": TYPES, "siteId": sites, "status": STATUSES}
    found: list[dict[str, Any]] = []
    for size in (1, 2, 3):
        for names in itertools.combinations(choices, size):
            for _ in range(3):
                found.append({name: rng.sample(list(choices[name]),
                                               min(len(choices[name]), rng.choice((1, 1, 2, 3))))
                              for name in names})
    found.append({"type": ["injury"], "severity": ["low", "high"]})
    found.append({"status": ["reported"], "pageSize": 1, "page": 2})
    found.append({"type": ["hazard"], "siteId": sites[:1], "pageSize": 2, "page": 3})
    return found


def assert_exact_totals(browser: Any, dbsession: Any, asked: list[dict[str, Any]]) -> None:
    for query in asked:
        assert total(browser, query) == counted(dbsession, query), query


def through_tallies(registry: Any, monkeypatch: pytest.MonkeyPatch, used: bool) -> None:
    """Let the list take its totals from the tallies, or count (the kept
    statements made anew)."""
    caches.forget(registry, listing.KEPT)
    found = [item for item in registry.get("incident_totals", ()) if item.name == "analytics.status"]
    assert found
    monkeypatch.setitem(registry, "incident_totals", found if used else [])


def nudge_status_tally(dbsession: Any, site_id: int, incident_type: str, status: str, by: int) -> None:
    """Move one status tally by hand (outside the service): the totals that
    read it show the difference, proof that they read the tallies."""
    dbsession.execute(update(Tally).where(
        Tally.kind == "status", Tally.month == counted_state.ALL_TIME, Tally.site_id == site_id,
        Tally.type == incident_type, Tally.k1 == status).values(n=Tally.n + by))
    dbsession.commit()


@pytest.mark.parametrize("seed", [1, 2])
def test_after_any_mix_of_changes_the_filtered_totals_are_the_counts(admin, dbsession, registry, seed,
                                                                     monkeypatch):
    """Reports filed, edited (type, site) and moved through the workflow at
    random: every combination of type, site and status (several values
    each) gives the count, from the tallies and counted alike."""
    rng = random.Random(seed)
    world = World(admin, rng)
    for _ in range(10):
        world.file()
    asked = filter_sets(rng, list(world.sites))
    operations = [world.file, world.update, world.move, world.move, world.move]
    for step in range(45):
        rng.choice(operations)()
        if step % 15 == 14:
            assert_exact_totals(admin, dbsession, asked)
    through_tallies(registry, monkeypatch, used=False)
    assert_exact_totals(admin, dbsession, asked)


@pytest.fixture
def plant(admin: Any) -> dict[str, Any]:
    """Two sites with reports of several types, some moved on."""
    north, south = new_site(admin, "Plant North")["id"], new_site(admin, "Plant South")["id"]
    rng = random.Random(3)
    numbers = [report(admin, rng.choice((north, south)), moment(rng), rng.choice(SOME_TYPES))
               for _ in range(12)]
    for number in numbers[::3]:
        move(admin, number, "triage")
    move(admin, numbers[1], "triage", "investigation")
    return {"north": north, "south": south, "numbers": numbers}


def test_the_total_is_read_from_the_status_tallies(admin, make_user, dbsession, plant):
    """A status tally moved by hand moves the totals of callers who see
    everything and filter only by what the tallies answer; a reporter's
    total, a filter they do not answer and an unfiltered list are counted."""
    north = plant["north"]
    query = {"type": "injury", "siteId": north}
    before = total(admin, query)
    assert before == counted(dbsession, query)
    supervisor, reporter = make_user("supervisor"), make_user("reporter")
    nudge_status_tally(dbsession, north, "injury", "reported", 5)
    assert total(admin, query) == before + 5
    assert total(supervisor, query) == before + 5
    assert total(admin, {"type": ["injury", "hazard"], "siteId": north}) == \
        counted(dbsession, {"type": ["injury", "hazard"], "siteId": north}) + 5
    assert total(admin, {"status": "reported"}) == counted(dbsession, {"status": "reported"}) + 5
    assert total(admin, {"status": "triage", "siteId": north}) == \
        counted(dbsession, {"status": "triage", "siteId": north})
    assert total(admin, {**query, "severity": "low"}) == counted(dbsession, {**query, "severity": "low"})
    assert total(admin, {}) == len(plant["numbers"])
    assert total(reporter, query) == 0


def test_tallies_never_built_fall_back_to_counting(admin, dbsession, registry, plant):
    """No TallyState (e.g. migrated without the application): the totals are
    counted, whatever the tallies hold; a rebuild makes them read again."""
    north = plant["north"]
    query = {"type": "injury", "siteId": north}
    dbsession.execute(delete(TallyState))
    dbsession.commit()
    nudge_status_tally(dbsession, north, "injury", "reported", 5)
    assert total(admin, query) == counted(dbsession, query)
    assert total(admin, {"status": "reported"}) == counted(dbsession, {"status": "reported"})
    recount(dbsession, registry)
    nudge_status_tally(dbsession, north, "injury", "reported", 5)
    assert total(admin, query) == counted(dbsession, query) + 5


def test_kiosk_and_anonymous_reports_move_the_totals(admin, client, dbsession, plant):
    from tests.plugins.kiosk.support import file_report as kiosk_report
    from tests.plugins.kiosk.support import new_link
    from tests.plugins.kiosk.support import report_body as kiosk_body

    north = plant["north"]
    query = {"type": "injury", "siteId": north, "status": "reported"}
    before = total(admin, query)
    link = new_link(admin, site_id=north)
    kiosk_report(client, link["token"], kiosk_body(north, type="injury", reporterName="Pat Doe"))
    kiosk_report(client, link["token"], kiosk_body(north, type="injury"))  # anonymous
    report(admin, north, moment(random.Random(2)), "injury", anonymous=True)
    assert total(admin, query) == before + 3 == counted(dbsession, query)


def test_a_rebuild_keeps_the_totals(admin, dbsession, registry, plant):
    asked = filter_sets(random.Random(4), [plant["north"], plant["south"]])
    assert_exact_totals(admin, dbsession, asked)
    recount(dbsession, registry)
    assert_exact_totals(admin, dbsession, asked)


def test_with_the_plugin_disabled_the_totals_are_counted(admin, dbsession, registry, app_settings, plant):
    """Without the analytics plugin no total source is registered: counted.
    Changes made meanwhile moved no tally: a rebuild brings them back in
    step (as the statistics need too), and the totals read them again."""
    asked = filter_sets(random.Random(5), [plant["north"], plant["south"]])
    with app_with_plugins(registry, app_settings, "osha kiosk") as app:
        browser = signed_in(app, ADMIN_EMAIL)
        for number in plant["numbers"][:4]:
            browser.post_json(f"{INCIDENTS}/{number}/transitions", {"to": "triage"}, expect_errors=True)
        browser.patch_json(f"{INCIDENTS}/{plant['numbers'][5]}",
                           {"type": "illness", "siteId": plant["south"]})
        report(browser, plant["north"], moment(random.Random(6)), "injury")
        assert_exact_totals(browser, dbsession, asked)
    recount(dbsession, registry)
    assert_exact_totals(admin, dbsession, asked)


def test_a_request_with_changes_not_yet_counted_is_not_answered_by_the_tallies(registry):
    """The tallies move as a request commits: until then its own changes are
    not in them, so such a request counts. pyramid_retry runs a failed
    request again as a new request object on the same environ: what the
    failed attempt noted (rolled back) is not the new attempt's."""
    from pyramid.request import Request, apply_request_extensions

    def attempt(environ: dict[str, Any] | None = None) -> Request:
        request = Request(environ) if environ is not None else Request.blank("/api/incidents", method="POST")
        request.registry = registry
        apply_request_extensions(request)
        return request

    request = attempt()
    assert totals.no_pending_counts(request)
    tallies.pending(request)
    assert not totals.no_pending_counts(request)
    assert totals.no_pending_counts(attempt(request.environ))


def test_the_tallies_decline_filters_they_do_not_answer():
    from sqlalchemy import bindparam

    organization = bindparam("organization")
    assert totals.status_total({}, organization) is None
    a, b = [bindparam("a")], [bindparam("b")]
    assert totals.status_total({"type": a, "severity": b}, organization) is None
    assert totals.status_total({"type": a, "status": b}, organization) is not None


def test_on_postgresql_the_count_is_not_run_when_the_tallies_answer(admin, dbsession, registry, plant,
                                                                    database_url):
    """COALESCE(tallies, count): PostgreSQL runs the count only when the
    tallies cannot tell (never built). SQLite, whose plan tells no loops,
    answers the same total either way."""
    query = {"type": "injury", "siteId": plant["north"]}
    if not database_url.startswith("postgresql"):
        assert total(admin, query) == counted(dbsession, query)
        dbsession.execute(delete(TallyState))
        assert total(admin, query) == counted(dbsession, query)
        dbsession.rollback()
        return
    total(admin, query)
    kept = next(kept for key, kept in caches.named(registry, listing.KEPT, listing.MOST_KEPT).items()
                     if key[0] == "all" and key[3] == (("type", 1), ("siteId", 1)) and key[4])
    organization = dbsession.execute(select(Incident.organization_id)).scalars().first()
    parameters = {"organization": organization, "f0_0": "injury", "f1_0": plant["north"], "limit": 25}

    def loops() -> dict[str, list[int]]:
        compiled = kept.read.statement.compile(dialect=dbsession.get_bind().dialect)
        plan = dbsession.connection().exec_driver_sql(
            "EXPLAIN (ANALYZE, FORMAT JSON) " + str(compiled),
            {**{name: bind.value for name, bind in compiled.binds.items()}, **parameters}).scalar()
        found: dict[str, list[int]] = {}

        def walk(node: dict[str, Any]) -> None:
            if "Relation Name" in node:
                found.setdefault(node["Relation Name"], []).append(node["Actual Loops"])
            for child in node.get("Plans", ()):
                walk(child)

        walk(plan[0]["Plan"])
        return found

    answered = loops()
    assert min(answered["incidents"]) == 0  # the count: never executed
    assert max(answered["analytics_tallies"]) >= 1
    dbsession.execute(delete(TallyState))
    fallen_back = loops()
    assert min(fallen_back["incidents"]) >= 1
    assert max(fallen_back["analytics_tallies"]) == 0
    dbsession.rollback()
