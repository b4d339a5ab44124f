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
per word instead of an ILIKE over every candidate row (what the trigram
indexes alone left to do for each match). Any other text
(`hydraulic hose`, `INC-0042`, `50%`) still needs the ILIKE, but only on
incidents that have, for each of its runs, a word containing that run: a
necessary condition, so the answer is the same. Both sides use
PostgreSQL's own `lower()` and `[[:alnum:]]`, so what counts as a letter or
a case is decided in one place.

The words are not stored in the row (they would double its width): a
query reads them from the index (a bitmap scan, which needs no recheck)
and must never work them out row by row (a regular expression over the
whole text of each row). So
`Lookup.condition` is for a count or a sort that only a bitmap scan can
serve, and `walking` (the ILIKE, as before) for any other plan, such as a
walk along the number index, where each visited row is checked.

Which of the two plans a page takes depends on how many incidents match
(incidents/listing.py, `searched_page`), and a bitmap reads the word's
whole posting list before a row is read. `incident_word_counts` (migration
0013_search_word_counts, kept by triggers in the transaction of each
change) says how many incidents of each organization have each word; a
text that is one run matches every incident that has a word containing
it, so the largest count of those words is a lower bound of the matches
(`Lookup.at_least`), known from the lookup statement alone.

A `plain_word` searched by a caller who sees every incident, with no
filter (the common search), skips the look-up statement: `newest` reads
the words, their counts and the page in one statement whose plan
PostgreSQL keeps, and pages a word in more than COUNT_BOUND incidents
through windows of the newest numbers ANDed with the word index before
walking the number index (`hydraulic` at 100,000 incidents: ~650 rows
checked with ILIKE before, ~90 read from the index now).

A text that is one word also finds the word's other forms (issue #42 item
3, migration 0028_perfdata_search_stems): "ladders" finds "ladder",
"injury" finds "injuries". The rule, on top of the one above: the incident
has, whole, a word of the same English stem as the text. On PostgreSQL the
stem is PostgreSQL's English Snowball stemmer (`ehs_search_stem`, a
b-tree on `incident_words`), and the listed words of the text's stem that
do not contain it (its *siblings*; those that do are found already) join
the words looked up in the word index: the same statements, the same
plans. Row by row (`walking`, the `many` part of `newest`) a sibling is a
whole run of the title, description or location (`~*` with the runs'
boundaries). On SQLite it is the Porter stemmer of an FTS5 index
(`incidents_fts`, kept by triggers), ORed as a subquery (`stemmed`).
A text of more than one run (`broken ladders`, `INC-0042`) is matched as
before, as a substring only: matching each of its words by stem would
change what a phrase finds ("hose  burst", "rack-a" match nothing).

Runs longer than 600 characters are kept as overlapping pieces of 600
every 200 (index entries have a size limit), so any text of up to 400
characters inside such a run is inside one piece; `q` is at most 200
characters long (`IncidentQuerySchema`).
"""

from __future__ import annotations

from dataclasses import dataclass

from pyramid.request import Request
from sqlalchemy import (
    BigInteger,
    ColumnElement,
    Integer,
    ScalarSelect,
    Text,
    and_,
    bindparam,
    func,
    or_,
    select,
    text,
)
from sqlalchemy.dialects.postgresql import ARRAY
from sqlalchemy.sql.selectable import TextualSelect

from ehs_core.incidents.models import Incident

# The incident's words, exactly as indexed by ix_incidents_search_words (PostgreSQL only).
SEARCH_WORDS = func.ehs_search_words(Incident.title, Incident.description, Incident.location_detail,
                                     type_=ARRAY(Text))
# The schema objects of the word search, made by migrations 0009 and 0013 on
# PostgreSQL only and left out of comparisons with the models.
SEARCH_OBJECTS = frozenset({"ix_incidents_search_words", "incident_words", "pk_incident_words",
                            "ix_incident_words_trgm", "incident_word_counts", "pk_incident_word_counts",
                            "ix_incident_words_stem", "incidents_fts", "incidents_fts_data",
                            "incidents_fts_idx", "incidents_fts_docsize", "incidents_fts_config",
                            "incidents_fts_content"})
# A run that more listed words contain than this (a letter or two: "a",
# "ab") narrows nothing worth an index lookup of each; it is left to ILIKE.
MAX_WORDS = 1000

# For each run of letters and digits of the lower-cased text: the listed
# words that contain it (at most MAX_WORDS + 1), the most incidents of the
# organization one of them is in (migration 0013_search_word_counts), and
# whether the text is that one run; and the run's siblings (the listed
# words of its stem that do not contain it), which a text that is one run
# also matches. A run holds no LIKE wildcard (% and _ are not letters).
# (OFFSET 0 keeps the words one array, made once.)
_RUNS = text(
    "SELECT lower(:q) ~ '^[[:alnum:]]+$' AS whole, found.words, found.siblings, "
    "(SELECT max(incidents) FROM incident_word_counts WHERE organization_id = :organization_id "
    "AND word = ANY(found.words || found.siblings)) AS most "
    "FROM regexp_split_to_table(lower(:q), '[^[:alnum:]]+') AS run, LATERAL ("
    "SELECT ARRAY(SELECT word FROM incident_words WHERE word LIKE '%' || run || '%' LIMIT :limit) AS words, "
    "ARRAY(SELECT word FROM incident_words WHERE ehs_search_stem(word) = ehs_search_stem(run) "
    "AND word NOT LIKE '%' || run || '%' ORDER BY word) AS siblings "
    "OFFSET 0) AS found WHERE run <> ''")

# The siblings of a text that is one run (none for any other), as the
# pattern of a whole run among the runs of a text, for `~*` (NULL: none).
# Siblings are runs of letters and digits: nothing in them is a regex
# operator.
_SIBLING_PATTERN = text(
    "SELECT '(^|[^[:alnum:]])(' || string_agg(word, '|' ORDER BY word) || ')($|[^[:alnum:]])' "
    "FROM incident_words WHERE lower(:q) ~ '^[[:alnum:]]+$' "
    "AND ehs_search_stem(word) = ehs_search_stem(lower(:q)) AND word NOT LIKE '%' || lower(:q) || '%'")


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
    """`q` as a condition on incidents (`substring`, the word's other forms
    and the number), served by the word index on PostgreSQL (one statement
    to look the words and the siblings up)."""
    if request.dbsession.get_bind().dialect.name != "postgresql":
        return Lookup(walking(q, "sqlite"))
    organization_id = request.identity.account.organization_id
    runs = request.dbsession.execute(_RUNS, {"q": q, "limit": MAX_WORDS + 1,
                                             "organization_id": organization_id}).all()
    narrowing = [hidden(list(run.words)) for run in runs if len(run.words) <= MAX_WORDS]
    whole = len(runs) == 1 and runs[0].whole
    siblings = list(runs[0].siblings) if whole else []
    if whole and narrowing:
        # exact: nothing to recheck (the words that contain it, and its siblings)
        matched = SEARCH_WORDS.overlap(hidden(list(runs[0].words) + siblings))
    else:
        matched = and_(*(SEARCH_WORDS.overlap(words) for words in narrowing), substring(q))
        if siblings:
            matched = or_(matched, SEARCH_WORDS.overlap(hidden(siblings, "siblings")))
    return Lookup(with_number(matched, q), (runs[0].most or 0) if whole else 0)


def hidden(words: list[str], name: str = "words") -> ScalarSelect:
    """The words as a subquery, a value the planner does not look into: it
    then plans every word alike (a few hundred matches, read through the
    index) instead of a sequential scan for a word it knows to be in most
    incidents, which would work out the words of each row it reads; and a
    prepared statement's generic plan is the plan every word gets anyway."""
    return select(bindparam(name, words, type_=ARRAY(Text))).scalar_subquery()


def one_word(q: str) -> bool:
    """`q` is one run of letters and digits (on SQLite; PostgreSQL decides
    it with its own `[[:alnum:]]`): only such a text is also matched by its
    stem."""
    return q.isalnum()


def stemmed(q: str, dialect: str) -> ColumnElement[bool] | None:
    """The incidents with a word of `q`'s stem, checked row by row (the
    rule of the module's docstring), or None when `q` is not one word.
    PostgreSQL: a sibling is a whole run of a text (`_SIBLING_PATTERN`,
    worked out once per statement). SQLite: the FTS5 index with the Porter
    stemmer (a subquery run once)."""
    if dialect == "postgresql":
        pattern = _SIBLING_PATTERN.bindparams(bindparam("q", q, type_=Text)).columns(
            pattern=Text).scalar_subquery()
        return or_(Incident.title.op("~*")(pattern), Incident.description.op("~*")(pattern),
                   Incident.location_detail.op("~*")(pattern))
    if not one_word(q):
        return None
    fts = text("SELECT rowid FROM incidents_fts WHERE incidents_fts MATCH :stem_term").bindparams(
        bindparam("stem_term", f'"{q}"', type_=Text)).columns(rowid=Integer)
    return Incident.id.in_(fts)


def with_number(matched: ColumnElement[bool], q: str) -> ColumnElement[bool]:
    number = named_number(q)
    return matched if number is None else or_(matched, Incident.number == number)


def walking(q: str, dialect: str) -> ColumnElement[bool]:
    """What `q` matches, checked row by row: the same answers as
    `Lookup.condition`, fit for any plan (a walk along the number index, the
    export). `dialect`: the database's (how a word's stem is found)."""
    by_stem = stemmed(q, dialect)
    return with_number(substring(q) if by_stem is None else or_(substring(q), by_stem), q)


def plain_word(q: str) -> bool:
    """`q` is one run of at least 3 ASCII letters and digits that names no
    number (`hydraulic`, `Forklift`, `c3po`): one run of letters and digits
    once lower-cased, whatever PostgreSQL's locale, so `newest` answers it.
    Shorter texts have no trigram to look the words up by: the plan
    `newest` keeps would read the whole trigram index of a large list of
    words, where `look_up`'s, made for the text, stops at the first words
    found."""
    return len(q) >= 3 and q.isascii() and q.isalnum() and named_number(q) is None


# The windows of `newest`: read through the word index when the word's
# count² < WINDOW_GATE · rows needed · highest number, sized to hold about
# WINDOWS[0] and WINDOWS[1] times the rows needed.
WINDOW_GATE = 16.0
WINDOWS = (3.0, 10.0)

# `newest`: what the word index and the word counts say about a plain word
# (`facts`, read once: every other part refers to it through a subquery, so
# PostgreSQL's generic plan, kept after the fifth run of the prepared
# statement, is the plan every word gets anyway and is not planned again at
# each run), then the matches of one of two cases, each behind a
# condition on `facts` that PostgreSQL checks once before running its part:
#
# - `few`: no listed word containing it is in more than `bound` incidents:
#   up to bound + 1 matches read through the word index, counted and sorted
#   by number for the page (`counted`, as the page of `listing.searched_page`);
# - `many`: one of them is, so more than `bound` incidents match: the page
#   and one more row, newest first. When the word is rare enough that its
#   posting list costs less than walking the number index to the page
#   (WINDOW_GATE: an entry of the list is far cheaper to read than a row to
#   check), the newest incidents are read in two windows of numbers sized
#   to hold about 3 and 10 times the rows needed (WINDOWS; the word's share
#   of incidents from its count; the second for when the newest reports
#   lack it), through the word index ANDed with the
#   number index; then the walk along the number index below them,
#   checking each row (`walking`). A LIMIT over the three in that order
#   stops at the first that completes the page, and each is in number
#   order below the previous, so the rows are the newest matches whatever
#   the windows hold: their sizes only decide the cost.
#
# The text's siblings (words of its stem that do not contain it) are
# looked up with the words that contain it, and checked row by row as whole
# runs (`stems`, NULL when it has none).
#
# No listed word contains it nor is a sibling (`unheard`): no incident does, and one row of
# nulls says so. (OFFSET 0 keeps the listed words one array, made once.)
# The word index answers without a recheck only for the listed words, so
# with more than MAX_WORDS of them (a letter or two) neither case answers
# from it: `few` finds nothing and `many` walks from the top.
_NEWEST = """WITH facts AS MATERIALIZED (
  SELECT f.words || f.siblings AS words, cardinality(f.words) <= {max_words} AS listed,
    cardinality(f.words) + cardinality(f.siblings) = 0 AS unheard,
    coalesce(m.most, 0) > {bound} AS many,
    '%' || :q || '%' AS pattern, t.top,
    CASE WHEN cardinality(f.siblings) > 0
      THEN '(^|[^[:alnum:]])(' || array_to_string(f.siblings, '|') || ')($|[^[:alnum:]])' END AS stems,
    coalesce(m.most > {bound} AND m.most::float8 * m.most < {gate} * {n} * t.top, false) AS windowed,
    t.top - ceil({near} * {n} * t.top / nullif(m.most, 0))::bigint AS lo1,
    t.top - ceil({far} * {n} * t.top / nullif(m.most, 0))::bigint AS lo2
  FROM (SELECT ARRAY(SELECT word FROM incident_words WHERE word LIKE '%' || lower(:q) || '%'
                     LIMIT {max_words} + 1) AS words,
               ARRAY(SELECT word FROM incident_words WHERE ehs_search_stem(word) = ehs_search_stem(lower(:q))
                     AND word NOT LIKE '%' || lower(:q) || '%' ORDER BY word) AS siblings OFFSET 0) AS f,
  LATERAL (SELECT max(incidents) AS most FROM incident_word_counts
           WHERE organization_id = :organization_id AND word = ANY(f.words || f.siblings)) AS m,
  LATERAL (SELECT coalesce(max(number), 0) AS top FROM incidents
           WHERE organization_id = :organization_id) AS t
)
(SELECT few.id, few.number, few.counted FROM (
  SELECT first.id, first.number, count(*) OVER () AS counted FROM (
    SELECT id, number FROM incidents
    WHERE (SELECT listed AND NOT many FROM facts) AND organization_id = :organization_id
      AND ehs_search_words(title, description, location_detail) && (SELECT words FROM facts)
    LIMIT {bound} + 1) AS first
  ORDER BY first.number DESC LIMIT {size} OFFSET {offset}) AS few)
UNION ALL
(SELECT newest.id, newest.number, CAST(NULL AS bigint) FROM (
  (SELECT id, number FROM incidents
   WHERE (SELECT listed AND windowed FROM facts) AND organization_id = :organization_id
     AND ehs_search_words(title, description, location_detail) && (SELECT words FROM facts)
     AND number > (SELECT lo1 FROM facts)
   ORDER BY number DESC LIMIT {n})
  UNION ALL
  (SELECT id, number FROM incidents
   WHERE (SELECT listed AND windowed FROM facts) AND organization_id = :organization_id
     AND ehs_search_words(title, description, location_detail) && (SELECT words FROM facts)
     AND number <= (SELECT lo1 FROM facts) AND number > (SELECT lo2 FROM facts)
   ORDER BY number DESC LIMIT {n})
  UNION ALL
  (SELECT id, number FROM incidents
   WHERE (SELECT many FROM facts) AND organization_id = :organization_id
     AND number <= (SELECT CASE WHEN listed AND windowed THEN lo2 ELSE top END FROM facts)
     AND (title ILIKE (SELECT pattern FROM facts) OR description ILIKE (SELECT pattern FROM facts)
          OR location_detail ILIKE (SELECT pattern FROM facts) OR title ~* (SELECT stems FROM facts)
          OR description ~* (SELECT stems FROM facts) OR location_detail ~* (SELECT stems FROM facts))
   ORDER BY number DESC LIMIT {n})
) AS newest LIMIT {size} + 1 OFFSET {offset})
UNION ALL
SELECT CAST(NULL AS integer), CAST(NULL AS integer), CAST(0 AS bigint) WHERE (SELECT unheard FROM facts)"""


def newest(size: int, offset: int, bound: int) -> TextualSelect:
    """For a `plain_word` searched by a caller who sees every incident of
    the organization, with no filter (PostgreSQL): the ids and numbers of
    the page's matches in one statement, without a look-up before it (see
    `_NEWEST`). Rows with `counted` (how many match, up to bound + 1): all
    matches were read, and `counted` is the total when at most `bound`.
    Rows without: more than `bound` match, and these are the page's and, if
    another page follows, one more. One row of nulls (counted 0): nothing
    matches. No rows: neither case could tell (a page past the end, too
    many listed words), and the caller asks again the long way. Size and
    offset are written into the statement (see `ehs_core.db.constant`):
    with them as parameters the generic plan cannot size the LIMITs and is
    not kept. Parameters: `q` and
    `organization_id`."""
    sql = _NEWEST.format(max_words=int(MAX_WORDS), bound=int(bound), n=int(offset) + int(size) + 1,
                         size=int(size), offset=int(offset), gate=float(WINDOW_GATE),
                         near=float(WINDOWS[0]), far=float(WINDOWS[1]))
    return (text(sql).bindparams(bindparam("q", type_=Text), bindparam("organization_id", type_=Integer))
            .columns(id=Integer, number=Integer, counted=BigInteger))
