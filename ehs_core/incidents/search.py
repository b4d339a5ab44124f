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
and must never work them out row by row (~30-50 us a row). So `condition`
is for a count or a sort that only a bitmap scan can serve, and `walking`
(the ILIKE, as before) for any other plan, such as a walk along the
number index, where each visited row is checked.

Runs longer than 600 characters are kept as overlapping pieces of 600
every 200 (index entries have a size limit), so any text of up to 400
characters inside such a run is inside one piece; `q` is at most 200
characters long (`IncidentQuerySchema`).
"""

from __future__ import annotations

from pyramid.request import Request
from sqlalchemy import ColumnElement, ScalarSelect, Text, and_, bindparam, func, or_, select, text
from sqlalchemy.dialects.postgresql import ARRAY

from ehs_core.incidents.models import Incident

# The incident's words, exactly as indexed by ix_incidents_search_words (PostgreSQL only).
SEARCH_WORDS = func.ehs_search_words(Incident.title, Incident.description, Incident.location_detail,
                                     type_=ARRAY(Text))
# The schema objects of the word search, made by migration 0009 on
# PostgreSQL only and left out of comparisons with the models.
SEARCH_OBJECTS = frozenset({"ix_incidents_search_words", "incident_words", "pk_incident_words",
                            "ix_incident_words_trgm"})
# A run that more listed words contain than this (a letter or two: "a",
# "ab") narrows nothing worth an index lookup of each; it is left to ILIKE.
MAX_WORDS = 1000

# For each run of letters and digits of the lower-cased text: the listed
# words that contain it (at most MAX_WORDS + 1), and whether the text is
# that one run. A run holds no LIKE wildcard (% and _ are not letters).
_RUNS = text(
    "SELECT lower(:q) ~ '^[[:alnum:]]+$' AS whole, "
    "ARRAY(SELECT word FROM incident_words WHERE word LIKE '%' || run || '%' LIMIT :limit) AS words "
    "FROM regexp_split_to_table(lower(:q), '[^[:alnum:]]+') AS run WHERE run <> ''")


def substring(q: str) -> ColumnElement[bool]:
    """The rule itself: the text inside the title, description or location, ignoring case."""
    return or_(Incident.title.icontains(q, autoescape=True),
               Incident.description.icontains(q, autoescape=True),
               Incident.location_detail.icontains(q, autoescape=True))


def named_number(q: str) -> int | None:
    """The incident number a text names: `INC-0042`, `inc-42`, `42`."""
    number = q.upper().removeprefix("INC-").strip()
    return int(number) if number.isdigit() and len(number) <= 9 else None


def text_condition(request: Request, q: str) -> ColumnElement[bool]:
    """The text part of `q` as a condition on incidents: `substring`, served
    by the word index on PostgreSQL (one statement to look the words up)."""
    if request.dbsession.get_bind().dialect.name != "postgresql":
        return substring(q)
    runs = request.dbsession.execute(_RUNS, {"q": q, "limit": MAX_WORDS + 1}).all()
    narrowing = [hidden(list(words)) for _, words in runs if len(words) <= MAX_WORDS]
    if len(runs) == 1 and runs[0].whole and narrowing:
        return SEARCH_WORDS.overlap(narrowing[0])  # exact: nothing to recheck
    return and_(*(SEARCH_WORDS.overlap(words) for words in narrowing), substring(q))


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


def condition(request: Request, q: str) -> ColumnElement[bool]:
    """What `q` matches, read through the word index: only for a count or
    a sort that no other index serves (see the module's docstring)."""
    return with_number(text_condition(request, q), q)


def walking(q: str) -> ColumnElement[bool]:
    """What `q` matches, checked row by row: the same answers as
    `condition`, fit for any plan (a walk along the number index, the
    export)."""
    return with_number(substring(q), q)
