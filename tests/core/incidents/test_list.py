"""The incident list: shape and paging, filters, the text search, and who
sees which incidents."""

from __future__ import annotations

from urllib.parse import urlencode

import pytest
from sqlalchemy import text

from ehs_core import caches
from tests.core.incidents import (
    WORD_COUNT_DRIFT,
    add_action,
    file_report,
    issue_paths,
    listed_numbers,
    listing,
    move,
    new_site,
)

# --- shape and paging -------------------------------------------------------


def test_the_list_has_items_page_page_size_and_total(admin):
    site = new_site(admin)
    for _ in range(3):
        file_report(admin, site["id"])
    body = listing(admin).json
    assert set(body) == {"items", "page", "pageSize", "total"}
    assert (body["page"], body["pageSize"], body["total"]) == (1, 25, 3)
    item = body["items"][0]
    assert item["reference"] == "INC-0003"
    assert {"number", "title", "type", "severity", "status", "occurredAt", "siteId", "areaId",
            "reporter", "anonymous"} <= set(item)


def test_the_list_shows_a_change_to_an_incident_on_the_next_read(admin):
    """What the list made of a row is kept while the row's values are the
    same (`serialize.incidents_json`): a change shows at once."""
    site = new_site(admin)
    number = file_report(admin, site["id"])["number"]
    before = listing(admin).json["items"][0]
    admin.patch_json(f"/api/incidents/{number}", {"title": "Renamed", "severity": "high",
                                                  "occurredAt": "2026-01-02T10:00:00-05:00"})
    move(admin, number, "triage")
    after = listing(admin).json["items"][0]
    assert (after["title"], after["severity"], after["occurredAt"], after["status"]) == (
        "Renamed", "high", "2026-01-02T10:00:00-05:00", "triage")
    assert after["updatedAt"] >= before["updatedAt"]
    detail = admin.get(f"/api/incidents/{number}").json
    assert after == {key: detail[key] for key in after}


def test_the_list_shows_new_names_of_a_site_an_area_and_a_reporter_at_once(admin, make_user):
    """Each item's text is kept while what it is made of is the same: a
    new name shows at once though the incident did not change."""
    site = new_site(admin)
    area = admin.post_json(f"/api/sites/{site['id']}/areas", {"name": "Line 1"}).json
    worker = make_user("reporter")
    file_report(worker, site["id"], areaId=area["id"])
    item = listing(admin).json["items"][0]
    assert (item["siteName"], item["areaName"], item["reporter"]["name"]) == (
        site["name"], "Line 1", worker.user["name"])
    admin.patch_json(f"/api/sites/{site['id']}", {"name": "Plant Renamed"})
    admin.patch_json(f"/api/areas/{area['id']}", {"name": "Line 2"})
    admin.patch_json(f"/api/users/{worker.user['id']}", {"name": "Zoe Renamed"})
    item = listing(admin).json["items"][0]
    assert (item["siteName"], item["areaName"], item["reporter"]["name"]) == (
        "Plant Renamed", "Line 2", "Zoe Renamed")


def test_an_empty_list(admin):
    assert listing(admin).json == {"items": [], "page": 1, "pageSize": 25, "total": 0}


def test_newest_first(admin):
    site = new_site(admin)
    for title in ("first", "second", "third"):
        file_report(admin, site["id"], title=title)
    items = listing(admin).json["items"]
    assert [i["number"] for i in items] == [3, 2, 1]
    assert [i["title"] for i in items] == ["third", "second", "first"]


def sorting_fixture(admin) -> None:
    """Five reports: their numbers, severities and when each happened
    differ in order (numbers 1-5)."""
    site = new_site(admin)
    for severity, occurred in (("low", "2026-03-05T08:00:00-05:00"),
                               ("critical", "2026-03-01T08:00:00-05:00"),
                               ("high", "2026-03-04T08:00:00-05:00"),
                               ("critical", "2026-03-03T08:00:00-05:00"),
                               ("medium", "2026-03-02T23:30:00-08:00")):
        file_report(admin, site["id"], severity=severity, occurredAt=occurred)


@pytest.mark.parametrize(("sort", "expected"), [
    ("", [5, 4, 3, 2, 1]),
    ("newest", [5, 4, 3, 2, 1]),
    ("oldest", [1, 2, 3, 4, 5]),
    # 5 happened at 2026-03-03T07:30Z, before 4 (13:00Z) and after 2.
    ("occurred", [1, 3, 4, 5, 2]),
    ("severity", [4, 2, 3, 5, 1]),
])
def test_the_list_is_sorted_as_asked(admin, sort, expected):
    sorting_fixture(admin)
    query = f"?sort={sort}" if sort else ""
    assert listed_numbers(admin, query) == expected
    body = listing(admin, f"{query}{'&' if query else '?'}pageSize=2&page=2").json
    assert ([i["number"] for i in body["items"]], body["total"]) == (expected[2:4], 5)
    one_by_one = [listed_numbers(admin, f"?sort={sort or 'newest'}&pageSize=1&page={page}")
                  for page in range(1, 7)]
    assert one_by_one == [[number] for number in expected] + [[]]


def test_a_sorted_list_keeps_the_filters_and_the_search(admin):
    sorting_fixture(admin)
    assert listed_numbers(admin, "?sort=severity&severity=critical&severity=low") == [4, 2, 1]
    body = listing(admin, "?sort=oldest&q=oil&pageSize=2").json
    assert ([i["number"] for i in body["items"]], body["total"]) == ([1, 2], 5)
    assert listed_numbers(admin, "?sort=oldest&q=INC-0003") == [3]
    assert listing(admin, "?sort=severity&q=nothing-like-this").json["total"] == 0


def test_a_sorted_list_shows_a_reporter_only_what_they_may_see(admin, make_user):
    alice, _ = visibility_fixture(admin, make_user)
    assert listed_numbers(alice, "?sort=oldest") == [1, 4]
    assert listed_numbers(alice, "?sort=severity&q=alice") == [4, 1]
    assert listing(alice, "?sort=occurred&page=2").json == {
        "items": [], "page": 2, "pageSize": 25, "total": 2}


def test_paging(admin):
    site = new_site(admin)
    for _ in range(5):
        file_report(admin, site["id"])
    first = listing(admin, "?pageSize=2").json
    assert ([i["number"] for i in first["items"]], first["page"], first["total"]) == ([5, 4], 1, 5)
    second = listing(admin, "?pageSize=2&page=2").json
    assert ([i["number"] for i in second["items"]], second["page"], second["pageSize"]) == ([3, 2], 2, 2)
    last = listing(admin, "?pageSize=2&page=3").json
    assert [i["number"] for i in last["items"]] == [1]
    beyond = listing(admin, "?pageSize=2&page=4").json
    assert (beyond["items"], beyond["total"]) == ([], 5)


@pytest.mark.parametrize("size", [1, 100])
def test_page_size_bounds_are_accepted(admin, size):
    site = new_site(admin)
    file_report(admin, site["id"])
    file_report(admin, site["id"])
    body = listing(admin, f"?pageSize={size}").json
    assert body["pageSize"] == size
    assert len(body["items"]) == min(size, 2)


@pytest.mark.parametrize(("query", "path"), [
    ("?pageSize=0", "pageSize"),
    ("?pageSize=101", "pageSize"),
    ("?pageSize=-1", "pageSize"),
    ("?pageSize=ten", "pageSize"),
    ("?pageSize=", "pageSize"),
    ("?page=0", "page"),
    ("?page=-3", "page"),
    ("?page=1.5", "page"),
    ("?type=fire", "type"),
    ("?severity=extreme", "severity"),
    ("?status=open", "status"),
    ("?siteId=north", "siteId"),
    ("?sort=title", "sort"),
    ("?sort=", "sort"),
])
def test_bad_query_parameters_are_400(admin, query, path):
    assert issue_paths(listing(admin, query, status=400)) == {path}


def test_the_list_needs_a_session(admin, client):
    response = listing(client, status=401)
    assert list(response.json) == ["error"]


def test_list_items_leave_out_the_detail_sections(admin):
    site = new_site(admin)
    file_report(admin, site["id"])
    item = listing(admin).json["items"][0]
    assert not {"investigation", "rootCauses", "actions", "attachments", "transitions", "can"} & set(item)


# --- filters --------------------------------------------------------------------------


def filter_fixture(admin):
    north = new_site(admin, "Plant North")
    south = new_site(admin, "Plant South")
    file_report(admin, north["id"], type="hazard", severity="low")            # 1
    file_report(admin, north["id"], type="injury", severity="high")           # 2
    file_report(admin, south["id"], type="near_miss", severity="high")        # 3
    file_report(admin, south["id"], type="injury", severity="critical")       # 4
    move(admin, 2, "triage")
    move(admin, 4, "triage")
    return north, south


def test_filters_by_type_severity_status_and_site(admin):
    north, south = filter_fixture(admin)
    assert listed_numbers(admin, "?type=injury") == [4, 2]
    assert listed_numbers(admin, "?type=near_miss") == [3]
    assert listed_numbers(admin, "?type=illness") == []
    assert listed_numbers(admin, "?severity=high") == [3, 2]
    assert listed_numbers(admin, "?severity=critical") == [4]
    assert listed_numbers(admin, "?status=triage") == [4, 2]
    assert listed_numbers(admin, "?status=reported") == [3, 1]
    assert listed_numbers(admin, f"?siteId={north['id']}") == [2, 1]
    assert listed_numbers(admin, f"?siteId={south['id']}") == [4, 3]
    assert listed_numbers(admin, "?siteId=999999") == []


def test_from_and_to_take_whole_days_in_the_servers_zone_both_inclusive(admin):
    site = new_site(admin)
    for day in ("2026-01-01", "2026-01-02", "2026-01-03"):
        file_report(admin, site["id"], occurredAt=f"{day}T23:30:00+00:00")  # 1, 2, 3 (UTC in the tests)
    assert listed_numbers(admin, "?from=2026-01-02") == [3, 2]
    assert listed_numbers(admin, "?from=2026-01-03") == [3]
    assert listed_numbers(admin, "?to=2026-01-02") == [2, 1]
    assert listed_numbers(admin, "?to=2026-01-01") == [1]
    assert listed_numbers(admin, "?from=2026-01-02&to=2026-01-02") == [2]
    assert listed_numbers(admin, "?from=2026-01-04") == []
    body = listing(admin, "?from=2026-01-01&to=2026-01-02&pageSize=1&page=2").json
    assert ([i["number"] for i in body["items"]], body["total"]) == ([1], 2)


def test_filters_combine_and_total_counts_the_filtered_set(admin):
    north, _ = filter_fixture(admin)
    body = listing(admin, f"?type=injury&siteId={north['id']}").json
    assert ([i["number"] for i in body["items"]], body["total"]) == ([2], 1)
    body = listing(admin, "?severity=high&status=reported&pageSize=1").json
    assert ([i["number"] for i in body["items"]], body["total"]) == ([3], 1)
    body = listing(admin, "?severity=high&pageSize=1").json
    assert ([i["number"] for i in body["items"]], body["total"]) == ([3], 2)


# --- text search --------------------------------------------------------------------------


def search_fixture(admin):
    site = new_site(admin)
    file_report(admin, site["id"], title="Forklift near miss", description="Driver too fast")          # 1
    file_report(admin, site["id"], title="Oil spill", description="Leaking HYDRAULIC hose")            # 2
    file_report(admin, site["id"], title="Trip hazard", locationDetail="Loading Dock east")           # 3
    file_report(admin, site["id"], title="Full % capacity", description="Warehouse over capacity")   # 4
    file_report(admin, site["id"], title="Cable_tray loose")                                         # 5
    return site


@pytest.mark.parametrize(("q", "expected"), [
    ("forklift", [1]),
    ("FORKLIFT", [1]),
    ("hydraulic", [2]),
    ("Hydraulic Hose", [2]),
    ("loading dock", [3]),
    ("DOCK EAST", [3]),
    ("capacity", [4]),
    ("a", [5, 4, 3, 2, 1]),
    ("nothing like this", []),
])
def test_q_matches_title_description_and_location_ignoring_case(admin, q, expected):
    search_fixture(admin)
    assert listed_numbers(admin, "?" + urlencode({"q": q})) == expected


def test_q_ignores_case_beyond_ascii(admin):
    site = new_site(admin)
    file_report(admin, site["id"], title="Ölfleck in Halle 3")
    file_report(admin, site["id"], title="Éclat de verre")
    for q, expected in [("ölfleck", [1]), ("ÖLFLECK", [1]), ("éclat", [2]), ("ÉCLAT", [2])]:
        assert listed_numbers(admin, "?" + urlencode({"q": q})) == expected, q


@pytest.mark.parametrize("q", ["INC-0002", "inc-0002", "2", "0002", " INC-0002 "])
def test_q_matches_the_number_or_reference(admin, q):
    search_fixture(admin)
    assert listed_numbers(admin, "?" + urlencode({"q": q})) == [2]


def test_q_with_another_number_does_not_match(admin):
    search_fixture(admin)
    assert listed_numbers(admin, "?q=INC-0009") == []
    assert listed_numbers(admin, "?q=9") == []


@pytest.mark.parametrize(("q", "expected"), [("%", [4]), ("_", [5]), ("Full %", [4]), ("t_a", [])])
def test_like_wildcards_in_q_are_literal(admin, q, expected):
    search_fixture(admin)
    assert listed_numbers(admin, "?" + urlencode({"q": q})) == expected


def test_q_combines_with_filters(admin):
    site = search_fixture(admin)
    other = new_site(admin, "Plant South")
    file_report(admin, other["id"], title="Forklift again")  # 6
    assert listed_numbers(admin, "?q=forklift") == [6, 1]
    assert listed_numbers(admin, f"?q=forklift&siteId={site['id']}") == [1]


def test_a_search_pages_newest_first_with_its_total_on_every_page(admin):
    site = new_site(admin)
    for n in range(1, 11):  # forklift in 1, 2, 4, 5, 7, 8, 10 (the newest); not in 3, 6, 9
        file_report(admin, site["id"], title=f"Forklift {n}" if n % 3 else f"Ladder {n}")
    pages = [listing(admin, f"?q=forklift&pageSize=3&page={page}").json for page in (1, 2, 3, 4)]
    assert [[i["number"] for i in body["items"]] for body in pages] == [[10, 8, 7], [5, 4, 2], [1], []]
    assert [body["total"] for body in pages] == [7, 7, 7, 7]


def test_q_finds_text_inside_words_across_words_and_around_punctuation(admin):
    site = new_site(admin)
    file_report(admin, site["id"], title="Forklift near miss", locationDetail="Rack A-12, aisle 3")  # 1
    file_report(admin, site["id"], title="Hydraulic hose burst", description="oil on floor")         # 2
    for q, expected in [("ork", [1]), ("klift", [1]), ("ft near", [1]), ("rack a-1", [1]), ("a-12", [1]),
                        ("12", [1]), ("aisle 3", [1]), ("e 3", [1]), ("c hose", [2]), ("l on fl", [2]),
                        ("hose  burst", []), ("rack-a", []), ("forklifts", [1]), ("forklifty", [])]:
        assert listed_numbers(admin, "?" + urlencode({"q": q})) == expected, q


# --- a word finds its other forms (issue #42 item 3) -------------------------------------------


def stem_fixture(admin):
    site = new_site(admin)
    file_report(admin, site["id"], title="Ladder slipped", description="Worker fell two rungs")        # 1
    file_report(admin, site["id"], title="Two ladders left in the aisle")                             # 2
    file_report(admin, site["id"], title="Minor injuries", locationDetail="Stepladder store")          # 3
    file_report(admin, site["id"], title="Forklift near miss", description="Injury avoided")           # 4
    return site


@pytest.mark.parametrize(("q", "expected"), [
    ("ladders", [2, 1]),       # the plural finds the singular (and itself)
    ("ladder", [3, 2, 1]),     # the singular finds the plural, and stays a substring ("Stepladder")
    ("LADDERS", [2, 1]),
    ("injury", [4, 3]),        # injury / injuries: one stem, neither inside the other
    ("injuries", [4, 3]),
    ("rung", [1]),
    ("worker", [1]),
    ("workers", [1]),
    ("lad", [3, 2, 1]),        # a substring is still found
    ("the", [2]),              # a stop word has no stem: only the substring ("in the aisle")
    ("INC-0004", [4]),         # the number, as before
    ("4", [4]),
    ("ladders left", [2]),     # more than one word: a substring, as before
    ("ladder slip", [1]),
])
def test_a_word_finds_its_plural_and_singular(admin, q, expected):
    stem_fixture(admin)
    assert listed_numbers(admin, "?" + urlencode({"q": q})) == expected, q


def test_a_word_finds_its_other_forms_in_every_order_and_past_the_bound(admin, bound):
    """The stems hold on every path a search takes: sorted (the word index),
    newest first within and beyond the count's bound (the walk along the
    numbers checks each row), and in the export."""
    site = new_site(admin)
    for n in range(1, 13):  # ladder in 1-6, ladders in 7-9, neither in 10-12
        file_report(admin, site["id"], title="Ladder" if n <= 6 else "Ladders" if n <= 9 else f"Crate {n}",
                    severity="high" if n % 2 else "low")
    for q, numbers in (("ladders", [9, 8, 7, 6, 5, 4, 3, 2, 1]), ("ladder", [9, 8, 7, 6, 5, 4, 3, 2, 1])):
        pages = [listing(admin, f"?q={q}&pageSize=4&page={page}").json for page in (1, 2, 3)]
        assert [i["number"] for body in pages for i in body["items"]] == numbers, q
        assert pages[-1]["total"] == 9
        assert listed_numbers(admin, f"?q={q}&sort=oldest&pageSize=50") == numbers[::-1]
        assert listed_numbers(admin, f"?q={q}&severity=high&pageSize=50") == [9, 7, 5, 3, 1]
    export = admin.get("/api/incidents/export?q=ladders", status=200).body.decode("utf-8")
    assert [f"INC-{n:04d}" in export for n in (1, 9, 10)] == [True, True, False]


def test_a_reporter_finds_other_forms_only_in_their_own_incidents(admin, make_user):
    site = new_site(admin)
    alice = make_user("reporter", name="Alice")
    file_report(alice, site["id"], title="Ladder wobbles")   # 1
    file_report(admin, site["id"], title="Ladder broken")    # 2
    assert listed_numbers(alice, "?q=ladders") == [1]
    assert listed_numbers(admin, "?q=ladders") == [2, 1]


def test_a_word_finds_other_forms_written_after_the_report(admin):
    site = new_site(admin)
    file_report(admin, site["id"], title="Spill")
    assert listed_numbers(admin, "?q=ladders") == []
    admin.patch_json("/api/incidents/1", {"title": "Ladder on its side"}, status=200)
    assert listed_numbers(admin, "?q=ladders") == [1]
    admin.patch_json("/api/incidents/1", {"title": "Spill again"}, status=200)
    assert listed_numbers(admin, "?q=ladders") == []


def test_q_finds_a_word_in_a_very_rare_incident_among_many(admin):
    site = new_site(admin)
    for n in range(1, 41):
        file_report(admin, site["id"], title="Scaffold collapse" if n in (3, 17) else f"Wet floor {n}")
    body = listing(admin, "?q=scaffold").json
    assert [i["number"] for i in body["items"]] == [17, 3]
    assert body["total"] == 2 and "totalExact" not in body


def test_q_finds_text_inside_a_very_long_run_of_letters(admin):
    site = new_site(admin)
    blob = "".join(f"x{n:04d}" for n in range(1000))  # 5,000 letters and digits, no space
    file_report(admin, site["id"], title="Pasted log", description=blob)
    file_report(admin, site["id"], title="Other")
    middle = blob[2400:2600]  # the longest q there is, 200 characters, from the middle
    assert listed_numbers(admin, "?" + urlencode({"q": middle})) == [1]
    assert listed_numbers(admin, "?" + urlencode({"q": blob[-7:] + " "})) == [1]
    assert listed_numbers(admin, "?" + urlencode({"q": "x0999x"})) == []


def test_q_finds_words_written_after_the_report_and_forgets_removed_ones(admin):
    site = new_site(admin)
    file_report(admin, site["id"], title="Ladder", description="Missing feet")
    admin.patch_json("/api/incidents/1", {"title": "Stepladder wobbles", "description": None})
    assert listed_numbers(admin, "?q=wobble") == [1]
    assert listed_numbers(admin, "?q=feet") == []


def test_q_answers_the_same_when_a_short_text_is_inside_too_many_words(admin, monkeypatch):
    from ehs_core.incidents import search
    search_fixture(admin)
    monkeypatch.setattr(search, "MAX_WORDS", 2)  # "a" is inside more words than this
    assert listed_numbers(admin, "?q=a") == [5, 4, 3, 2, 1]
    assert listed_numbers(admin, "?q=a c") == []
    assert listed_numbers(admin, "?q=ll %") == [4]


# --- a search with more matches than it counts ------------------------------------------------


@pytest.fixture
def bound(monkeypatch):
    """A search counts its matches up to 5 instead of 1,000."""
    from ehs_core.incidents import listing as operations
    monkeypatch.setattr(operations, "COUNT_BOUND", 5)
    return 5


def many_forklifts(admin, site_id=None):
    """12 forklift reports (numbers 1-16, not 4, 8, 12, 16)."""
    site_id = site_id or new_site(admin)["id"]
    for n in range(1, 17):
        file_report(admin, site_id, title=f"Forklift {n}" if n % 4 else f"Ladder {n}")
    return site_id


def test_a_search_beyond_the_bound_says_more_than_and_still_pages_to_its_end(admin, bound):
    many_forklifts(admin)
    pages = [listing(admin, f"?q=forklift&pageSize=3&page={page}").json for page in (1, 2, 3, 4, 5)]
    assert [[i["number"] for i in body["items"]] for body in pages] == [
        [15, 14, 13], [11, 10, 9], [7, 6, 5], [3, 2, 1], []]
    # More than `total` match on every page that has another after it; the
    # last page and a page past it know the exact count.
    assert [(body["total"], body.get("totalExact")) for body in pages] == [
        (5, False), (6, False), (9, False), (12, None), (12, None)]
    assert set(pages[0]) == {"items", "page", "pageSize", "total", "totalExact"}


@pytest.mark.parametrize(("gate", "windows"), [(1e9, (3.0, 10.0)), (1e9, (0.5, 1.0)), (1e9, (0.01, 0.02)),
                                               (0.0, (3.0, 10.0))])
def test_a_search_beyond_the_bound_pages_newest_first_whatever_its_windows_hold(admin, bound, monkeypatch,
                                                                                gate, windows):
    """On PostgreSQL a word known to be in more incidents than the bound is
    paged through windows of the newest numbers read through the word
    index, then a walk along the numbers below them (`search.newest`): how
    much each window holds (all the page, part of it, nothing, or no
    windows at all) changes the cost, never the answer. Here the newest
    incidents do not have the word."""
    from ehs_core.incidents import search
    monkeypatch.setattr(search, "WINDOW_GATE", gate)
    monkeypatch.setattr(search, "WINDOWS", windows)
    site_id = many_forklifts(admin)
    for n in range(17, 23):
        file_report(admin, site_id, title=f"Ladder {n}")
    pages = [listing(admin, f"?q=forklift&pageSize=2&page={page}").json for page in range(1, 8)]
    assert [[i["number"] for i in body["items"]] for body in pages] == [
        [15, 14], [13, 11], [10, 9], [7, 6], [5, 3], [2, 1], []]
    assert [(body["total"], body.get("totalExact")) for body in pages] == [
        (5, False), (5, False), (6, False), (8, False), (10, False), (12, None), (12, None)]
    upper, lower = (listing(admin, f"?q={q}&pageSize=5&page=2").json for q in ("FORKLIFT", "forklift"))
    assert upper == lower
    far = listing(admin, "?q=forklift&pageSize=100&page=1000000").json  # windows of 10^8 rows
    assert (far["items"], far["total"], far.get("totalExact")) == ([], 12, None)


def test_a_search_up_to_the_bound_counts_exactly(admin, bound):
    site = new_site(admin)
    for n in range(1, 8):
        file_report(admin, site["id"], title=f"Forklift {n}" if n <= bound else f"Ladder {n}")
    body = listing(admin, "?q=forklift&pageSize=2").json
    assert ([i["number"] for i in body["items"]], body["total"]) == ([5, 4], 5)
    assert "totalExact" not in body


def test_a_search_beyond_the_bound_keeps_the_filters_and_what_a_reporter_sees(admin, make_user, bound):
    site = new_site(admin)
    alice = make_user("reporter", name="Alice")
    for n in range(1, 15):
        file_report(alice if n % 2 else admin, site["id"], title=f"Forklift {n}",
                    severity="high" if n % 3 == 0 else "low")
    body = listing(alice, "?q=forklift&pageSize=4").json
    assert [i["number"] for i in body["items"]] == [13, 11, 9, 7]
    assert (body["total"], body["totalExact"]) == (5, False)
    assert listing(alice, "?q=forklift&pageSize=4&page=2").json["total"] == 7  # 5, 3, 1: the last page
    body = listing(admin, "?q=forklift&severity=high").json
    assert ([i["number"] for i in body["items"]], body["total"]) == ([12, 9, 6, 3], 4)
    assert "totalExact" not in body


def test_a_search_follows_edits_across_the_bound(admin, bound, dbsession):
    """Whether a word is in more incidents than the search counts changes
    as reports are edited and filed (on PostgreSQL the word counts say so
    before any incident is read), and every answer follows at once."""
    site = new_site(admin)
    for n in range(1, 8):
        file_report(admin, site["id"], title=f"Forklift {n}", description="Reversing near the dock")
    assert (listing(admin, "?q=forklift&pageSize=3").json["total"],
            listing(admin, "?q=forklift&pageSize=3").json["totalExact"]) == (5, False)
    for number in (2, 4, 6):
        admin.patch_json(f"/api/incidents/{number}", {"title": f"Pallet jack {number}"}, status=200)
    body = listing(admin, "?q=forklift&pageSize=3").json
    assert ([i["number"] for i in body["items"]], body["total"]) == ([7, 5, 3], 4)
    assert "totalExact" not in body
    admin.patch_json("/api/incidents/4", {"title": "FORKLIFT again"}, status=200)
    admin.patch_json("/api/incidents/5", {"description": "A forklift reversing near the dock"}, status=200)
    body = listing(admin, "?q=forklift&pageSize=3").json
    assert ([i["number"] for i in body["items"]], body["total"]) == ([7, 5, 4], 5)
    assert "totalExact" not in body
    file_report(admin, site["id"], title="Another forklift")  # 8
    body = listing(admin, "?q=forklift&pageSize=3").json
    assert ([i["number"] for i in body["items"]], body["total"], body["totalExact"]) == ([8, 7, 5], 5, False)
    assert listed_numbers(admin, "?q=pallet") == [6, 2]
    if dbsession.get_bind().dialect.name == "postgresql":
        assert dbsession.execute(text(WORD_COUNT_DRIFT)).all() == []


# --- visibility -----------------------------------------------------------------------------


def visibility_fixture(admin, make_user):
    site = new_site(admin)
    alice = make_user("reporter", name="Alice")
    bob = make_user("reporter", name="Bob")
    file_report(alice, site["id"], title="Alice's report")        # 1
    file_report(bob, site["id"], title="Bob's report")            # 2
    file_report(admin, site["id"], title="Admin's report")        # 3
    file_report(admin, site["id"], title="Assigned to Alice")     # 4
    file_report(bob, site["id"], title="Action without assignee")  # 5
    add_action(admin, 4, alice.user["id"])
    add_action(admin, 5, None)
    return alice, bob


def test_a_reporter_sees_own_reports_and_those_with_an_action_assigned_to_them(admin, make_user):
    alice, bob = visibility_fixture(admin, make_user)
    body = listing(alice).json
    assert [i["number"] for i in body["items"]] == [4, 1]
    assert body["total"] == 2
    assert listed_numbers(bob) == [5, 2]


def test_filters_and_search_stay_within_what_a_reporter_sees(admin, make_user):
    alice, _ = visibility_fixture(admin, make_user)
    assert listed_numbers(alice, "?q=report") == [1]
    assert listed_numbers(alice, "?q=INC-0002") == []
    assert listed_numbers(alice, "?q=3") == []
    assert listing(alice, "?q=Bob").json["total"] == 0


@pytest.mark.parametrize("role", ["supervisor", "safety_manager"])
def test_supervisors_and_above_see_everything(admin, make_user, role):
    visibility_fixture(admin, make_user)
    browser = make_user(role)
    body = listing(browser).json
    assert [i["number"] for i in body["items"]] == [5, 4, 3, 2, 1]
    assert body["total"] == 5
    assert listed_numbers(admin) == [5, 4, 3, 2, 1]


def test_a_reporter_with_nothing_sees_nothing(admin, make_user):
    visibility_fixture(admin, make_user)
    carol = make_user("reporter")
    assert listing(carol).json == {"items": [], "page": 1, "pageSize": 25, "total": 0}


def test_a_list_filter_repeated_matches_any_of_its_values(admin):
    site = new_site(admin)
    other = new_site(admin, "Plant South")
    file_report(admin, site["id"], type="injury")
    file_report(admin, site["id"], type="illness")
    file_report(admin, site["id"], type="hazard")
    file_report(admin, other["id"], type="injury")
    assert listed_numbers(admin, "?type=injury&type=illness") == [4, 2, 1]
    assert listed_numbers(admin, f"?type=injury&type=illness&siteId={site['id']}") == [2, 1]
    assert listed_numbers(admin, f"?siteId={site['id']}&siteId={other['id']}&type=hazard") == [3]
    assert listing(admin, "?type=injury&type=illness").json["total"] == 3
    response = listing(admin, "?type=injury&type=fire", status=400)
    assert issue_paths(response) == {"type"}


# --- the total from a registered source (extensions.add_incident_total) -------------------


@pytest.fixture
def offer_total(registry, monkeypatch):
    """Register a total source in place of the plugins' (the lists' kept
    statements made anew for the test)."""
    from ehs_core.incidents import listing as incident_listing
    from ehs_core.incidents.extensions import IncidentTotal

    caches.forget(registry, incident_listing.KEPT)

    def offer(source, ready=None):
        monkeypatch.setitem(registry, "incident_totals", [IncidentTotal("test", source, ready)])
        caches.named(registry, incident_listing.KEPT, incident_listing.MOST_KEPT).clear()

    return offer


def over_by_1000(filters, organization):
    """A total that is the count plus 1000, counted with the filters' bound
    values (type only; declines anything else)."""
    from sqlalchemy import func, select

    from ehs_core.incidents.models import Incident

    if set(filters) != {"type"}:
        return None
    return select(func.count() + 1000).where(
        Incident.organization_id == organization, Incident.type.in_(filters["type"])).scalar_subquery()


def test_a_total_source_gives_the_total_of_callers_who_see_everything(admin, make_user, offer_total):
    """The source's total is the list's for a caller who sees every incident
    and a set of filters it answers, with the values the list binds (one or
    several), on every page; a reporter's list, and filters it declines,
    are counted."""
    alice = make_user("reporter")
    site = new_site(admin)
    for kind in ("injury", "injury", "hazard", "illness"):
        file_report(admin, site["id"], type=kind)
    file_report(alice, site["id"], type="injury")
    offer_total(over_by_1000)
    assert listing(admin, "?type=injury").json["total"] == 1003
    assert listing(admin, "?type=injury&type=illness").json["total"] == 1004
    assert listing(admin, "?type=injury&pageSize=1&page=2").json["total"] == 1003
    assert listing(admin, "?type=injury&severity=low").json["total"] == 3
    assert listing(admin, f"?siteId={site['id']}").json["total"] == 5
    assert listing(admin).json["total"] == 5
    assert listing(alice, "?type=injury").json["total"] == 1
    assert listing(admin, "?q=floor&type=injury").json["total"] == 3


def test_a_total_source_that_cannot_tell_is_counted_instead(admin, offer_total):
    """NULL from the source: the list counts in the same statement."""
    from sqlalchemy import null

    site = new_site(admin)
    for kind in ("injury", "hazard", "injury"):
        file_report(admin, site["id"], type=kind)
    offer_total(lambda filters, organization: null())
    assert listing(admin, "?type=injury").json["total"] == 2
    assert listing(admin, "?type=hazard&pageSize=1&page=2").json["total"] == 1


def test_a_total_source_not_ready_for_a_request_is_not_asked(admin, offer_total):
    site = new_site(admin)
    file_report(admin, site["id"], type="injury")
    offer_total(over_by_1000, ready=lambda request: False)
    assert listing(admin, "?type=injury").json["total"] == 1
    offer_total(over_by_1000, ready=lambda request: True)
    assert listing(admin, "?type=injury").json["total"] == 1001


def test_two_total_sources_of_one_name_conflict_at_start_up():
    from pyramid.config import Configurator
    from pyramid.exceptions import ConfigurationError

    config = Configurator()
    config.include("ehs_core.incidents.extensions")
    config.add_incident_total("tallies", over_by_1000)
    config.add_incident_total("tallies", over_by_1000)
    with pytest.raises(ConfigurationError):
        config.commit()
