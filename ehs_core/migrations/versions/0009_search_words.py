"""an index of the incidents' words and a list of them: the list's text search (PostgreSQL)

The list's `q` matches incidents whose title, description or location
contains the text. Found through the trigram indexes, every candidate had
to be checked against the text (ILIKE), one row at a time for a common
word. Now (ehs_core/incidents/search.py):

- `ehs_search_words(title, description, location)`: an incident's words,
  the maximal runs of letters and digits of its lower-cased texts (runs
  longer than 600 characters as overlapping pieces of 600 every 200, so each
  fits an index entry); `ix_incidents_search_words`, a GIN index on it
  (fastupdate off, as the trigram indexes: see 0003). An index on the
  expression rather than a stored column: the words would double the width
  of every incident row, and the statistics read whole tables of them;
- `incident_words`: every word that occurs in some incident, with a
  trigram index, so the words containing a text are found without reading
  incidents. Triggers add the words of new and edited incidents (a word no
  longer used stays listed: it just matches nothing); the words of the
  existing incidents are listed here, and the index built over them.

SQLite has none of this and keeps the ILIKE search, which gives the same
answers. The models do not map these objects (search.py names them);
`ehs_core.incidents.search.SEARCH_OBJECTS` leaves them out of the schema
comparisons.

Revision ID: 0009_search_words
Revises: 0008_failed_mail
Create Date: 2026-12-02
"""
from alembic import op

revision = '0009_search_words'
down_revision = '0008_failed_mail'
branch_labels = None
depends_on = None

# Lower-cased, split at anything but letters and digits (PostgreSQL's own
# lower() and [[:alnum:]], as ILIKE and search.py use), empty strings
# dropped, distinct. A query must read the words from the index (a bitmap
# scan, no recheck) and never work them out row by row: COST tells the
# planner that working them out is far dearer than the ILIKE,
# PARALLEL RESTRICTED keeps it from buying parallel workers for scans that
# read at most 1,001 rows.
WORDS_FUNCTION = """
CREATE FUNCTION ehs_search_words(title text, description text, location text) RETURNS text[]
LANGUAGE sql IMMUTABLE PARALLEL RESTRICTED COST 2000 AS $$
  SELECT coalesce(array_agg(DISTINCT CASE WHEN length(w) <= 600 THEN w ELSE substr(w, s, 600) END), '{}')
  FROM regexp_split_to_table(lower(concat_ws(' ', title, description, location)), '[^[:alnum:]]+') AS w,
       generate_series(1, greatest(length(w) - 400, 1), 200) AS s
  WHERE w <> ''
$$
"""
# New words in one sorted INSERT per statement, so two transactions that
# add the same new words wait for each other in the same order (no deadlock).
LEARN_INSERTED = """
CREATE FUNCTION ehs_learn_inserted_words() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO incident_words (word)
  SELECT DISTINCT w FROM added, unnest(ehs_search_words(added.title, added.description, added.location_detail)) AS w
  ORDER BY w
  ON CONFLICT DO NOTHING;
  RETURN NULL;
END $$
"""
LEARN_UPDATED = """
CREATE FUNCTION ehs_learn_updated_words() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO incident_words (word)
  SELECT w FROM unnest(ehs_search_words(NEW.title, NEW.description, NEW.location_detail)) AS w ORDER BY w
  ON CONFLICT DO NOTHING;
  RETURN NULL;
END $$
"""


def upgrade() -> None:
    if op.get_bind().dialect.name != 'postgresql':
        return
    op.execute(WORDS_FUNCTION)
    op.execute('CREATE INDEX ix_incidents_search_words ON incidents '
               'USING gin (ehs_search_words(title, description, location_detail)) WITH (fastupdate = off)')
    op.execute('CREATE TABLE incident_words (word text NOT NULL, CONSTRAINT pk_incident_words PRIMARY KEY (word))')
    op.execute('INSERT INTO incident_words (word) '
               'SELECT DISTINCT unnest(ehs_search_words(title, description, location_detail)) FROM incidents')
    op.execute('CREATE INDEX ix_incident_words_trgm ON incident_words USING gin (word gin_trgm_ops) '
               'WITH (fastupdate = off)')
    op.execute(LEARN_INSERTED)
    op.execute(LEARN_UPDATED)
    # Statement-level for inserts (one INSERT for a bulk of reports, as the
    # seeder writes them); row-level for updates, only when a text changed,
    # so a transition or the number taken last (under the numbering lock)
    # does no work here.
    op.execute('CREATE TRIGGER incidents_learn_inserted_words AFTER INSERT ON incidents '
               'REFERENCING NEW TABLE AS added FOR EACH STATEMENT EXECUTE FUNCTION ehs_learn_inserted_words()')
    op.execute('CREATE TRIGGER incidents_learn_updated_words AFTER UPDATE ON incidents FOR EACH ROW '
               'WHEN (OLD.title IS DISTINCT FROM NEW.title OR OLD.description IS DISTINCT FROM NEW.description '
               'OR OLD.location_detail IS DISTINCT FROM NEW.location_detail) '
               'EXECUTE FUNCTION ehs_learn_updated_words()')


def downgrade() -> None:
    if op.get_bind().dialect.name != 'postgresql':
        return
    op.execute('DROP TRIGGER incidents_learn_updated_words ON incidents')
    op.execute('DROP TRIGGER incidents_learn_inserted_words ON incidents')
    op.execute('DROP FUNCTION ehs_learn_updated_words()')
    op.execute('DROP FUNCTION ehs_learn_inserted_words()')
    op.execute('DROP TABLE incident_words')
    op.execute('DROP INDEX ix_incidents_search_words')
    op.execute('DROP FUNCTION ehs_search_words(text, text, text)')
