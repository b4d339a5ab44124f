"""The tallies (ehs_plugins.analytics.tallies) give the statistics of callers
who see every incident from sums kept as incidents change. Whatever happens
to the incidents, those answers must be the ones the rows give (a
reporter's path, and the path taken when the tallies are not usable).

Each test here changes incidents through the API, then asks the same
questions twice, once from the tallies and once from the rows, and also
checks that the sums kept equal the sums rebuilt from scratch."""

from __future__ import annotations

import datetime as dt
import random
from collections.abc import Callable
from typing import Any

import pytest
from sqlalchemy import delete, func, select

from ehs_core.incidents.models import Incident
from ehs_plugins.analytics import counted_state, rebuild, stats, tallies
from ehs_plugins.analytics.models import CountedIncident, Tally, TallyState
from tests.plugins.analytics import (
    INCIDENTS,
    OVERVIEW,
    add_action,
    add_case,
    add_root_cause,
    analytics,
    new_area,
    new_site,
    report,
    set_action_status,
    today,
)

TYPES = ("near_miss", "hazard", "injury", "illness", "property_damage", "environmental")
SEVERITIES = ("low", "medium", "high", "critical")
ZONES = (None, "America/New_York", "Asia/Kolkata", "Europe/Berlin", "Pacific/Chatham")
CATEGORIES = ("equipment", "training", "procedure", "design")
BODY_PARTS = (None, "12", "44", "54")  # not coded, eye, hand, foot
TARGETS = ("triage", "investigation", "actions", "verification", "closed")


def from_rows(monkeypatch: pytest.MonkeyPatch) -> Callable[[], None]:
    """Make the statistics read the rows for everyone; returns the undo."""
    monkeypatch.setattr(stats, "figures_for", lambda request, site_id=None, incident_type=None:
                        stats.Rows(request, site_id, incident_type))
    return monkeypatch.undo


def tallied_sums(dbsession: Any) -> dict[tuple, tuple]:
    """The kept tallies that are not zero (each the sum of its shards)."""
    key = (Tally.kind, Tally.month, Tally.site_id, Tally.type, Tally.k1, Tally.k2)
    return {tuple(row[:6]): tuple(row[6:]) for row in dbsession.execute(
        select(*key, func.sum(Tally.n), func.sum(Tally.total), func.sum(Tally.closed)).group_by(*key))
            if tuple(row[6:]) != (0, 0, 0)}


def rebuilt_sums(dbsession: Any, registry: Any) -> dict[tuple, tuple]:
    """The tallies counted from the rows now."""
    sums: dict[tuple, list[int]] = {}
    for state in counted_state.read_states(dbsession, registry, Incident.id.is_not(None)).values():
        for key, values in counted_state.contributions(state).items():
            item = sums.setdefault(key, [0, 0, 0])
            for i, value in enumerate(values):
                item[i] += value
    return {key: tuple(values) for key, values in sums.items() if any(values)}


def questions(rng: random.Random, sites: list[int]) -> list[tuple[str, dict[str, str]]]:
    """The overview and analytics over periods that start and end anywhere
    (weekly and monthly trends), with and without filters."""
    asked: list[tuple[str, dict[str, str]]] = [(OVERVIEW, {})]
    on = today()
    for _ in range(8):
        first = on - dt.timedelta(days=rng.randrange(0, 800))
        last = min(first + dt.timedelta(days=rng.choice((0, 6, 30, 91, 92, 200, 400, 1000))),
                   first + dt.timedelta(days=1094))
        query = {"from": first.isoformat(), "to": last.isoformat()}
        if rng.random() < 0.3:
            query["siteId"] = str(rng.choice(sites))
        if rng.random() < 0.3:
            query["type"] = rng.choice(TYPES)
        asked.append(("/api/stats/analytics", query))
    return asked


def answers(browser: Any, asked: list[tuple[str, dict[str, str]]]) -> list[Any]:
    return [browser.get(path, params=query, status=200).json for path, query in asked]


def assert_same_answers(browser: Any, monkeypatch: pytest.MonkeyPatch, dbsession: Any, registry: Any,
                        asked: list[tuple[str, dict[str, str]]]) -> None:
    assert tallied_sums(dbsession) == rebuilt_sums(dbsession, registry)
    kept = answers(browser, asked)
    undo = from_rows(monkeypatch)
    try:
        read = answers(browser, asked)
    finally:
        undo()
    for (path, query), mine, theirs in zip(asked, kept, read, strict=True):
        assert mine == theirs, (path, query)


def moment(rng: random.Random) -> str:
    """An instant in the last two years, written with some UTC offset."""
    instant = dt.datetime.now(dt.UTC) - dt.timedelta(seconds=rng.randrange(0, 730 * 86400))
    offset = dt.timedelta(minutes=rng.choice((0, -300, 330, 60, -600, 765)))
    instant = instant.replace(microsecond=rng.randrange(0, 1_000_000))
    return instant.astimezone(dt.timezone(offset)).isoformat()


class World:
    """Sites and incidents the random writes act on."""

    def __init__(self, admin: Any, rng: random.Random) -> None:
        self.admin, self.rng = admin, rng
        self.sites: dict[int, list[int]] = {}
        for i, zone in enumerate(ZONES[:4]):
            site = new_site(admin, f"Plant {i}", **({"timezone": zone} if zone else {}))["id"]
            self.sites[site] = [new_area(admin, site, f"Area {i}.{j}")["id"] for j in range(2)]
        self.incidents: list[int] = []
        self.causes: list[int] = []
        self.actions: list[int] = []
        self.cases: list[int] = []

    def place(self) -> dict[str, Any]:
        site = self.rng.choice(list(self.sites))
        area = self.rng.choice([None, *self.sites[site]])
        return {"siteId": site, **({"areaId": area} if area else {})}

    def file(self) -> None:
        rng = self.rng
        place = self.place()
        self.incidents.append(report(self.admin, place.pop("siteId"), moment(rng), rng.choice(TYPES),
                                     severity=rng.choice(SEVERITIES), **place))

    def update(self) -> None:
        rng = self.rng
        body: dict[str, Any] = {}
        for _ in range(rng.randrange(1, 4)):
            field = rng.choice(("type", "severity", "place", "occurredAt", "title"))
            if field == "type":
                body["type"] = rng.choice(TYPES)
            elif field == "severity":
                body["severity"] = rng.choice(SEVERITIES)
            elif field == "place":
                body.update(self.place())
            elif field == "occurredAt":
                body["occurredAt"] = moment(rng)
            else:
                body["title"] = f"Renamed {rng.random()}"
        # A report with injury cases may refuse another type (the OSHA plugin).
        number = rng.choice(self.incidents)
        response = self.admin.patch_json(f"{INCIDENTS}/{number}", body, expect_errors=True)
        assert response.status_int in (200, 409), response.body

    def move(self) -> None:
        number = self.rng.choice(self.incidents)
        self.admin.post_json(f"{INCIDENTS}/{number}/transitions", {"to": self.rng.choice(TARGETS)},
                             expect_errors=True)

    def cause(self) -> None:
        rng = self.rng
        choice = rng.random()
        if self.causes and choice < 0.25:
            self.admin.delete(f"/api/root-causes/{self.causes.pop(rng.randrange(len(self.causes)))}",
                              status=204)
        elif self.causes and choice < 0.5:
            self.admin.patch_json(f"/api/root-causes/{rng.choice(self.causes)}",
                                  {"category": rng.choice(CATEGORIES)}, status=200)
        else:
            cause = add_root_cause(self.admin, rng.choice(self.incidents), rng.choice(CATEGORIES))
            self.causes.append(cause["id"])

    def action(self) -> None:
        rng = self.rng
        if self.actions and rng.random() < 0.6:
            action = rng.choice(self.actions)
            status = rng.choice(("open", "in_progress", "done", "verified", "cancelled"))
            due = today() + dt.timedelta(days=rng.randrange(-400, 60))
            body = rng.choice(({"status": status}, {"dueDate": due.isoformat()},
                               {"dueDate": None}))
            self.admin.patch_json(f"/api/actions/{action}", body, expect_errors=True)
            return
        due = rng.choice((None, today() + dt.timedelta(days=rng.randrange(-400, 60))))
        response = self.admin.post_json(f"{INCIDENTS}/{rng.choice(self.incidents)}/actions",
                                        {"title": "Fix it", **({"dueDate": due.isoformat()} if due else {})},
                                        expect_errors=True)
        if response.status_int == 201:
            self.actions.append(response.json["id"])
            if rng.random() < 0.5:
                set_action_status(self.admin, response.json["id"], rng.choice(("done", "in_progress")))

    def case(self) -> None:
        rng = self.rng
        if self.cases and rng.random() < 0.4:
            case_id = rng.choice(self.cases)
            if rng.random() < 0.3:
                self.admin.delete(f"/api/osha/cases/{case_id}", status=204)
                self.cases.remove(case_id)
            else:
                self.admin.patch_json(f"/api/osha/cases/{case_id}", rng.choice((
                    {"daysAwayFromWork": True, "daysAway": rng.randrange(1, 30)},
                    {"restrictedOrTransfer": True, "daysRestricted": 3, "daysAwayFromWork": False,
                     "daysAway": 0},
                    {"workRelated": False}, {"workRelated": True},
                    {"bodyPartCode": rng.choice(BODY_PARTS)})), status=200)
            return
        number = rng.choice(self.incidents)
        self.admin.patch_json(f"{INCIDENTS}/{number}", {"type": rng.choice(("injury", "illness"))},
                              expect_errors=True)
        response = self.admin.post_json(f"/api/osha/incidents/{number}/cases",
                                        {"name": "Pat Doe", "workRelated": True, "newCase": True,
                                         "medicalTreatment": True, "bodyPartCode": rng.choice(BODY_PARTS)},
                                        expect_errors=True)
        if response.status_int == 201:
            self.cases.append(response.json["id"])

    def zone(self) -> None:
        site = self.rng.choice(list(self.sites))
        self.admin.patch_json(f"/api/sites/{site}", {"timezone": self.rng.choice(ZONES)}, status=200)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_a_random_mix_of_writes_gives_the_answers_of_the_rows(admin, dbsession, registry, monkeypatch, seed):
    rng = random.Random(seed)
    world = World(admin, rng)
    for _ in range(12):
        world.file()
    asked = questions(rng, list(world.sites))
    operations = [world.file, world.update, world.move, world.move, world.cause, world.action, world.case]
    for step in range(60):
        rng.choice(operations)()
        if step == 30:
            world.zone()
        if step % 20 == 19:
            assert_same_answers(admin, monkeypatch, dbsession, registry, asked)
    assert_same_answers(admin, monkeypatch, dbsession, registry, asked)


# --- each event that moves a count -----------------------------------------------------------------


@pytest.fixture
def world(admin: Any) -> World:
    world = World(admin, random.Random(7))
    for _ in range(6):
        world.file()
    return world


def check(world: World, monkeypatch: pytest.MonkeyPatch, dbsession: Any, registry: Any) -> None:
    asked = questions(random.Random(5), list(world.sites))
    assert_same_answers(world.admin, monkeypatch, dbsession, registry, asked)


class Transient(Exception):
    """A failure pyramid_retry runs the request again for (as it does a
    serialization failure or a dropped connection)."""


def fail_first_answer(monkeypatch: pytest.MonkeyPatch, module: Any) -> list[int]:
    """Make the first answer a view of `module` builds fail, after the
    change and its event; returns the calls made."""
    from pyramid_retry import mark_error_retryable

    calls: list[int] = []
    real = module.incident_json

    def answer(*args: Any, **kw: Any) -> Any:
        calls.append(1)
        if len(calls) == 1:
            error = Transient()
            mark_error_retryable(error)
            raise error
        return real(*args, **kw)

    monkeypatch.setattr(module, "incident_json", answer)
    return calls


def test_a_request_run_again_by_the_retry_moves_the_counts_once(world, monkeypatch, dbsession, registry):
    """pyramid_retry runs a failed request again with the same WSGI environ:
    the counts noted by the failed attempt (rolled back) must not stand in
    for the new attempt's, which move the tallies as it commits."""
    from ehs_core.incidents import views as incident_views
    from ehs_core.workflow import views as workflow_views

    calls = fail_first_answer(monkeypatch, incident_views)
    world.file()
    assert len(calls) == 2
    assert tallied_sums(dbsession) == rebuilt_sums(dbsession, registry)
    calls = fail_first_answer(monkeypatch, incident_views)
    world.admin.patch_json(f"{INCIDENTS}/{world.incidents[0]}", {"type": "illness"}, status=200)
    assert len(calls) == 2
    calls = fail_first_answer(monkeypatch, workflow_views)
    world.admin.post_json(f"{INCIDENTS}/{world.incidents[1]}/transitions", {"to": "triage"}, status=200)
    assert len(calls) == 2
    monkeypatch.undo()
    assert tallied_sums(dbsession) == rebuilt_sums(dbsession, registry)
    check(world, monkeypatch, dbsession, registry)


def test_filing_a_report_moves_the_counts(world, monkeypatch, dbsession, registry):
    before = tallied_sums(dbsession)
    world.file()
    assert tallied_sums(dbsession) != before
    check(world, monkeypatch, dbsession, registry)


@pytest.mark.parametrize("body", [{"type": "injury"}, {"severity": "critical"},
                                  {"occurredAt": "2025-02-03T04:05:06+05:30"}])
def test_correcting_a_report_moves_the_counts(world, monkeypatch, dbsession, registry, body):
    world.admin.patch_json(f"{INCIDENTS}/{world.incidents[0]}", body, status=200)
    check(world, monkeypatch, dbsession, registry)


def test_moving_a_report_to_another_site_or_area_moves_the_counts(world, monkeypatch, dbsession, registry):
    sites = list(world.sites)
    world.admin.patch_json(f"{INCIDENTS}/{world.incidents[0]}",
                           {"siteId": sites[2], "areaId": world.sites[sites[2]][1]},
                           status=200)
    world.admin.patch_json(f"{INCIDENTS}/{world.incidents[1]}", {"areaId": None}, status=200)
    check(world, monkeypatch, dbsession, registry)


def test_workflow_moves_and_closing_move_the_counts(world, monkeypatch, dbsession, registry):
    number = world.incidents[0]
    world.admin.patch_json(f"{INCIDENTS}/{number}", {"severity": "low"}, status=200)
    for target in ("triage", "closed"):
        world.admin.post_json(f"{INCIDENTS}/{number}/transitions", {"to": target}, status=200)
    check(world, monkeypatch, dbsession, registry)
    # reopened
    world.admin.post_json(f"{INCIDENTS}/{number}/transitions", {"to": "investigation"}, status=200)
    check(world, monkeypatch, dbsession, registry)


def test_root_causes_added_changed_and_removed_move_the_counts(world, monkeypatch, dbsession, registry):
    first = add_root_cause(world.admin, world.incidents[0], "equipment")["id"]
    add_root_cause(world.admin, world.incidents[0], "equipment")
    world.admin.patch_json(f"/api/root-causes/{first}", {"category": "training"}, status=200)
    check(world, monkeypatch, dbsession, registry)
    world.admin.delete(f"/api/root-causes/{first}", status=204)
    check(world, monkeypatch, dbsession, registry)


def test_actions_added_and_followed_up_move_the_counts(world, monkeypatch, dbsession, registry):
    number = world.incidents[0]
    late = add_action(world.admin, number, due=today() - dt.timedelta(days=40))["id"]
    soon = add_action(world.admin, number, due=today() + dt.timedelta(days=3))["id"]
    add_action(world.admin, number, due=today() - dt.timedelta(days=2))
    set_action_status(world.admin, late, "done")
    check(world, monkeypatch, dbsession, registry)
    long_ago = (today() - dt.timedelta(days=100)).isoformat()
    world.admin.patch_json(f"/api/actions/{soon}", {"dueDate": long_ago},
                           status=200)
    set_action_status(world.admin, late, "cancelled")
    check(world, monkeypatch, dbsession, registry)


def test_actions_of_one_incident_due_on_days_of_one_month_count_each(world, monkeypatch, dbsession, registry):
    """The action tallies keep each due month (`action`) and day
    (`action.d`): two actions of one incident, both late, due on two days of
    one month count twice in the month, and a period that starts or ends
    between them counts the one inside."""
    number = world.incidents[2]
    month = (today().replace(day=1) - dt.timedelta(days=40)).replace(day=1)
    for day in (3, 20, 21):
        action = add_action(world.admin, number, due=month.replace(day=day))["id"]
        set_action_status(world.admin, action, "done")
    add_action(world.admin, number, due=month.replace(day=25))
    check(world, monkeypatch, dbsession, registry)
    last_of_month = (month + dt.timedelta(days=32)).replace(day=1) - dt.timedelta(days=1)
    for first, last in ((month, last_of_month), (month.replace(day=10), last_of_month),
                        (month.replace(day=4), month.replace(day=20)),
                        (month - dt.timedelta(days=45), month)):
        tallied = analytics(world.admin, first, last)["actions"]
        undo = from_rows(monkeypatch)
        try:
            assert analytics(world.admin, first, last)["actions"] == tallied, (first, last)
        finally:
            undo()
    assert analytics(world.admin, month, last_of_month)["actions"]["late"] == 4


def test_injury_cases_added_changed_and_removed_move_the_counts(world, monkeypatch, dbsession, registry):
    number = world.incidents[0]
    world.admin.patch_json(f"{INCIDENTS}/{number}", {"type": "injury"}, status=200)
    case = add_case(world.admin, number, workRelated=True, newCase=True, daysAwayFromWork=True,
                    daysAway=4)["id"]
    add_case(world.admin, number, workRelated=True, newCase=True, medicalTreatment=True)
    check(world, monkeypatch, dbsession, registry)
    world.admin.patch_json(f"/api/osha/cases/{case}", {"daysAwayFromWork": False, "daysAway": 0,
                                                       "restrictedOrTransfer": True, "daysRestricted": 2},
                           status=200)
    check(world, monkeypatch, dbsession, registry)
    world.admin.delete(f"/api/osha/cases/{case}", status=204)
    check(world, monkeypatch, dbsession, registry)


def test_parts_of_the_body_coded_changed_and_removed_move_the_counts(world, monkeypatch, dbsession, registry):
    """`byBodyPart` of a record keeper comes from the `body` tallies: after
    each change of a case's part of the body it is the count of the rows."""
    number = world.incidents[1]
    world.admin.patch_json(f"{INCIDENTS}/{number}", {"type": "injury"}, status=200)
    hand = add_case(world.admin, number, name="Ann One", bodyPartCode="44")["id"]
    add_case(world.admin, number, name="Bob Two")
    check(world, monkeypatch, dbsession, registry)
    world.admin.patch_json(f"/api/osha/cases/{hand}", {"bodyPartCode": "12"}, status=200)
    check(world, monkeypatch, dbsession, registry)
    world.admin.patch_json(f"/api/osha/cases/{hand}", {"bodyPartCode": None}, status=200)
    check(world, monkeypatch, dbsession, registry)
    world.admin.delete(f"/api/osha/cases/{hand}", status=204)
    check(world, monkeypatch, dbsession, registry)
    first = today() - dt.timedelta(days=800)
    assert analytics(world.admin, first, today())["byBodyPart"] == [
        {"code": None, "title": None, "count": 1}]


def test_a_sites_new_zone_places_its_incidents_again(world, monkeypatch, dbsession, registry):
    """Months and hours are local to the site: a new zone moves its incidents
    between months and hours of the week."""
    site = list(world.sites)[1]
    world.admin.patch_json(f"{INCIDENTS}/{world.incidents[0]}", {"siteId": site}, status=200)
    before = tallied_sums(dbsession)
    world.admin.patch_json(f"/api/sites/{site}", {"timezone": "Pacific/Auckland"}, status=200)
    assert tallied_sums(dbsession) != before
    check(world, monkeypatch, dbsession, registry)


def test_a_report_placed_in_a_zone_its_site_no_longer_has_is_counted_in_the_sites_zone(
        world, monkeypatch, dbsession, registry):
    """The zone a report's months and hours are counted in is read before
    its counted state is stored; when the site's zone changed meanwhile (the
    worker read it before another request's change committed), the report
    is placed again in the zone the site has."""
    monkeypatch.setattr(tallies, "site_timezone", lambda request, site_id: "Pacific/Chatham")
    world.file()
    world.file()
    monkeypatch.undo()
    assert tallied_sums(dbsession) == rebuilt_sums(dbsession, registry)
    check(world, monkeypatch, dbsession, registry)


def test_without_complete_tallies_the_rows_answer(world, dbsession, registry):
    """No tally state (tallies never built, e.g. migrated without the
    application) or another server zone: the rows answer, and a rebuild
    makes the tallies usable again."""
    body = analytics(world.admin, today() - dt.timedelta(days=800), today())
    dbsession.execute(delete(TallyState))
    dbsession.execute(delete(Tally))
    dbsession.commit()
    assert analytics(world.admin, today() - dt.timedelta(days=800), today()) == body
    rebuild.rebuild_all(dbsession, registry)
    dbsession.commit()
    assert analytics(world.admin, today() - dt.timedelta(days=800), today()) == body
    assert tallied_sums(dbsession) == rebuilt_sums(dbsession, registry)


def test_seeding_counts_the_seeded_incidents(clean_environ, tmp_path, monkeypatch):
    """`ehs seed` writes in bulk, without events; its data is counted once
    every seeder has written (as rebuilt from the rows), and the statistics
    answer from it as from the rows."""
    from ehs_core.config import configure
    from ehs_core.migrations import upgrade
    from ehs_core.seed import SeedOptions, seed
    from ehs_core.testing import PASSWORD, PUBLIC_URL, Client, base_settings

    settings = base_settings(f"sqlite:///{tmp_path / 'seed.sqlite'}", 1, str(tmp_path / "uploads"))
    config = configure(dict(settings, **{"ehs.plugins": "osha kiosk analytics"}))
    registry = config.registry
    try:
        upgrade(registry)
        seed(registry, SeedOptions(incidents=80, years=2, sites=3, seed=3, password=PASSWORD),
             progress=lambda _: None)
        with registry["dbsession_factory"]() as session:
            assert session.execute(select(CountedIncident.incident_id)).first() is not None
            assert tallied_sums(session) == rebuilt_sums(session, registry)
            sites = [row[0] for row in session.execute(select(Incident.site_id).distinct())]
        asked = questions(random.Random(11), sites)
        browser = Client(config.make_wsgi_app(), origin=PUBLIC_URL)
        browser.login("admin1@seed.example")
        kept = answers(browser, asked)
        from_rows(monkeypatch)
        assert answers(browser, asked) == kept
    finally:
        registry["db.engine"].dispose()
