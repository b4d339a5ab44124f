"""the list's search finds a word's other forms: "ladders" finds "ladder" (issue #42 item 3)

A text that is one word (one run of letters and digits) also matches the
incidents that have a word of the same English stem, whole: "ladders"
finds "Ladder", "injury" finds "injuries". Every earlier match still
holds (the search is the old one OR this); ehs_core/incidents/search.py.

PostgreSQL: the words are already listed (`incident_words`, 0009) and
indexed in the incidents (`ix_incidents_search_words`, GIN). A word's
*siblings* are the listed words of the same stem, by PostgreSQL's own
English Snowball stemmer (`ehs_search_stem(word)`, `ts_lexize` of
`english_stem`, NULL for a stop word); a b-tree index on that expression
finds them in one probe, and the search ORs them into the words it looks
up in the same GIN index, so a stemmed search costs no new statement, no
new index on the incidents (filing writes nothing more) and keeps the plan
of the common-word search (a word and its siblings are one array, as
before). A Spanish stemmer, once the service speaks Spanish, is a second
function and index beside this one.

SQLite: an FTS5 index of the title, description and location with the
Porter stemmer (`incidents_fts`, `tokenize='porter unicode61'`), an
external-content table over `incidents` kept by triggers in the
transaction of each change, filled here from the existing incidents.

Neither is mapped by the models (`search.SEARCH_OBJECTS`).

Revision ID: 0028_perfdata_search_stems
Revises: 0027_followup
Create Date: 2026-11-28
"""
from alembic import op

revision = '0028_perfdata_search_stems'
down_revision = '0027_followup'
branch_labels = None
depends_on = None

# The stem of one lower-cased word (ts_lexize is immutable; a stop word has no stem: NULL).
STEM_FUNCTION = """
CREATE FUNCTION ehs_search_stem(word text) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT (ts_lexize('english_stem'::regdictionary, word))[1]
$$
"""

SQLITE_TRIGGERS = (
    """CREATE TRIGGER incidents_fts_inserted AFTER INSERT ON incidents BEGIN
  INSERT INTO incidents_fts (rowid, title, description, location_detail)
  VALUES (new.id, new.title, new.description, new.location_detail);
END""",
    """CREATE TRIGGER incidents_fts_deleted AFTER DELETE ON incidents BEGIN
  INSERT INTO incidents_fts (incidents_fts, rowid, title, description, location_detail)
  VALUES ('delete', old.id, old.title, old.description, old.location_detail);
END""",
    """CREATE TRIGGER incidents_fts_updated AFTER UPDATE OF title, description, location_detail ON incidents
BEGIN
  INSERT INTO incidents_fts (incidents_fts, rowid, title, description, location_detail)
  VALUES ('delete', old.id, old.title, old.description, old.location_detail);
  INSERT INTO incidents_fts (rowid, title, description, location_detail)
  VALUES (new.id, new.title, new.description, new.location_detail);
END""",
)


def upgrade() -> None:
    if op.get_bind().dialect.name == 'postgresql':
        op.execute(STEM_FUNCTION)
        op.execute('CREATE INDEX ix_incident_words_stem ON incident_words (ehs_search_stem(word))')
        return
    op.execute("CREATE VIRTUAL TABLE incidents_fts USING fts5(title, description, location_detail, "
               "content='incidents', content_rowid='id', tokenize='porter unicode61')")
    for trigger in SQLITE_TRIGGERS:
        op.execute(trigger)
    op.execute("INSERT INTO incidents_fts (incidents_fts) VALUES ('rebuild')")


def downgrade() -> None:
    if op.get_bind().dialect.name == 'postgresql':
        op.execute('DROP INDEX ix_incident_words_stem')
        op.execute('DROP FUNCTION ehs_search_stem(text)')
        return
    for name in ('incidents_fts_updated', 'incidents_fts_deleted', 'incidents_fts_inserted'):
        op.execute(f'DROP TRIGGER {name}')
    op.execute('DROP TABLE incidents_fts')
