"""The list's text search `q`: what it matches, and how PostgreSQL finds it
without reading every incident.

What it matches, on every database: an incident whose title, description or
location contains the text, ignoring case (`ILIKE '%…%'`, which PostgreSQL
and SQLite evaluate as `lower(column) LIKE lower(text)`), or whose number
the text names (`INC-0042`, `42`). `substring` is that rule as SQL; SQLite
uses it as it is.

How PostgreSQL finds it (migration 0009_search_words): the *words* of an
incident are the maximal runs of letters and digits of its lower-cased
title, description and location (`ehs_search_words(...)`, with a GIN index
on that expression), and `incident_words` lists every word that occurs in
some incident (kept by triggers, with a trigram index). A text that is one
run of letters and digits (`forklift`, `hydraulic`, `42`) occurs in a
lower-cased text exactly when it occurs inside one of that text's words, so

    q matches  <=>  the incident has a word that contains lower(q)
               <=>  words && (the listed words that contain lower(q))

which the index answers with no false match to recheck: one posting list
per word instead of an ILIKE over every candidate row (which is what cost
~50 ms for 27,000 matches with the trigram indexes). Any other text
(`hydraulic hose`, `INC-0042`, `50%`) still needs the ILIKE, but only on
incidents that have, for each of its runs, a word containing that run: a
necessary condition, so the answer is the same. Both sides use
PostgreSQL's own `lower()` and `[[:alnum:]]`, so what counts as a letter or
a case is decided in one place.

The words are not stored in the row (they would double its width): a
query reads them from the index (a bitmap scan, which needs no recheck)
and must never work them out row by row (~30-50 us a row). So
`Lookup.condition` is for a count or a sort that only a bitmap scan can
serve, and `walking` (the ILIKE, as before) for any other plan, such as a
walk along the number index, where each visited row is checked.

Which of the two plans a page takes depends on how many incidents match
(incidents/listing.py, `searched_page`), and a bitmap costs as much as the
word's whole posting list (~6-8 ms for a word in 27,000 incidents, before
a row is read). `incident_word_counts` (migration
0013_search_word_counts, kept by triggers in the transaction of each
change) says how many incidents of each organization have each word; a
text that is one run matches every incident that has a word containing
it, so the largest count of those words is a lower bound of the matches
(`Lookup.at_least`), known from the lookup statement alone.

Runs longer than 600 characters are kept as overlapping pieces of 600
every 200 (index entries have a size limit), so any text of up to 400
characters inside such a run is inside one piece; `q` is at most 200
characters long (`IncidentQuerySchema`).
"""

from __future__ import annotations

from dataclasses import dataclass

from pyramid.request import Request
from sqlalchemy import ColumnElement, ScalarSelect, Text, and_, bindparam, func, or_, select, text
from sqlalchemy.dialects.postgresql import ARRAY

from ehs_core.incidents.models import Incident

# The incident's words, exactly as indexed by ix_incidents_search_words (PostgreSQL only).
SEARCH_WORDS = func.ehs_search_words(Incident.title, Incident.description, Incident.location_detail,
                                     type_=ARRAY(Text))
# The schema objects of the word search, made by migrations 0009 and 0013 on
# PostgreSQL only and left out of comparisons with the models.
SEARCH_OBJECTS = frozenset({"ix_incidents_search_words", "incident_words", "pk_incident_words",
                            "ix_incident_words_trgm", "incident_word_counts", "pk_incident_word_counts"})
# A run that more listed words contain than this (a letter or two: "a",
# "ab") narrows nothing worth an index lookup of each; it is left to ILIKE.
MAX_WORDS = 1000

# For each run of letters and digits of the lower-cased text: the listed
# words that contain it (at most MAX_WORDS + 1), the most incidents of the
# organization one of them is in (migration 0013_search_word_counts), and
# whether the text is that one run. A run holds no LIKE wildcard (% and _
# are not letters). (OFFSET 0 keeps the words one array, made once.)
_RUNS = text(
    "SELECT lower(:q) ~ '^[[:alnum:]]+$' AS whole, found.words, "
    "(SELECT max(incidents) FROM incident_word_counts "
    "WHERE organization_id = :organization_id AND word = ANY(found.words)) AS most "
    "FROM regexp_split_to_table(lower(:q), '[^[:alnum:]]+') AS run, LATERAL ("
    "SELECT ARRAY(SELECT word FROM incident_words WHERE word LIKE '%' || run || '%' LIMIT :limit) AS words "
    "OFFSET 0) AS found WHERE run <> ''")


@dataclass(frozen=True)
class Lookup:
    """What `q` matches, read through the word index (`condition`: only for
    a count or a sort that no other index serves, see the module's
    docstring), and how many incidents of the organization it surely
    matches (`at_least`, 0 when that is not known): a text that is one run
    matches at least every incident that has one of the words containing
    it, and the word's count says how many those are."""

    condition: ColumnElement[bool]
    at_least: int = 0


def substring(q: str) -> ColumnElement[bool]:
    """The rule itself: the text inside the title, description or location, ignoring case."""
    return or_(Incident.title.icontains(q, autoescape=True),
               Incident.description.icontains(q, autoescape=True),
               Incident.location_detail.icontains(q, autoescape=True))


def named_number(q: str) -> int | None:
    """The incident number a text names: `INC-0042`, `inc-42`, `42`."""
    number = q.upper().removeprefix("INC-").strip()
    return int(number) if number.isdigit() and len(number) <= 9 else None


def look_up(request: Request, q: str) -> Lookup:
    """`q` as a condition on incidents (`substring` and the number), served
    by the word index on PostgreSQL (one statement to look the words up)."""
    if request.dbsession.get_bind().dialect.name != "postgresql":
        return Lookup(with_number(substring(q), q))
    organization_id = request.identity.account.organization_id
    runs = request.dbsession.execute(_RUNS, {"q": q, "limit": MAX_WORDS + 1,
                                             "organization_id": organization_id}).all()
    narrowing = [hidden(list(run.words)) for run in runs if len(run.words) <= MAX_WORDS]
    whole = len(runs) == 1 and runs[0].whole
    if whole and narrowing:
        matched = SEARCH_WORDS.overlap(narrowing[0])  # exact: nothing to recheck
    else:
        matched = and_(*(SEARCH_WORDS.overlap(words) for words in narrowing), substring(q))
    return Lookup(with_number(matched, q), (runs[0].most or 0) if whole else 0)


def hidden(words: list[str]) -> ScalarSelect:
    """The words as a subquery, a value the planner does not look into: it
    then plans every word alike (a few hundred matches, read through the
    index) instead of a sequential scan for a word it knows to be in most
    incidents, which would work out the words of each row it reads; and a
    prepared statement's generic plan is the plan every word gets anyway."""
    return select(bindparam("words", words, type_=ARRAY(Text))).scalar_subquery()


def with_number(matched: ColumnElement[bool], q: str) -> ColumnElement[bool]:
    number = named_number(q)
    return matched if number is None else or_(matched, Incident.number == number)


def walking(q: str) -> ColumnElement[bool]:
    """What `q` matches, checked row by row: the same answers as
    `Lookup.condition`, fit for any plan (a walk along the number index, the
    export)."""
    return with_number(substring(q), q)
