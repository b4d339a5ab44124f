"""how many incidents of an organization have each word: the search picks its plan by it (PostgreSQL)

A search for a word in more than COUNT_BOUND incidents (`forklift`, in a
quarter of 100,000) answers "more than 1,000" and walks the number index
for its page; to know that, it read 1,001 matches through the word index
first, which builds the word's whole bitmap.
`incident_word_counts` keeps, per organization and word, how many of its
incidents have that word, so a word's count of more than the bound says
"more than 1,000 matches" before any incident is read
(ehs_core/incidents/search.py, `Lookup.at_least`).

The counts move in the transaction that changes what they count, by
triggers, as an `INSERT … ON CONFLICT DO UPDATE SET incidents = incidents
+ excluded.incidents`: the row's lock makes two changes of one count queue,
neither is lost, and a rollback takes it back. Only numbered incidents
count: a report is stored without its number and takes it as the last
statement before commit (incidents/numbering.py), and that UPDATE is when
its words are counted, under the organization's numbering lock, which
already queues the organization's reports; so the count rows' locks are
held for the same few statements and the commit, not for the request, and
no two reports wait for each other on them that did not wait on the number
anyway. An edit that changes a text moves only the counts of the words it
adds or removes. Each statement moves its rows in (organization, word)
order, so two of them wait for each other in the same order.

The existing incidents are counted here, with the incidents locked against
writes meanwhile, so that no change slips between the count and the
triggers.

Revision ID: 0013_search_word_counts
Revises: 0012_investigation_lead
Create Date: 2026-12-03
"""
from alembic import op

revision = '0013_search_word_counts'
down_revision = '0012_investigation_lead'
branch_labels = None
depends_on = None

# Reports are inserted without a number (counted when they take it, below);
# `ehs seed` inserts numbered incidents in bulk, one statement a batch.
COUNT_INSERTED = """
CREATE FUNCTION ehs_count_inserted_words() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF EXISTS (SELECT FROM added WHERE added.number IS NOT NULL) THEN
    INSERT INTO incident_word_counts (organization_id, word, incidents)
    SELECT added.organization_id, w, count(*)
    FROM added, unnest(ehs_search_words(added.title, added.description, added.location_detail)) AS w
    WHERE added.number IS NOT NULL
    GROUP BY added.organization_id, w ORDER BY added.organization_id, w
    ON CONFLICT (organization_id, word) DO UPDATE SET incidents = incident_word_counts.incidents + excluded.incidents;
  END IF;
  RETURN NULL;
END $$
"""
# Numbered (the row counts from now on: the common case, a report taking
# its number, under the numbering lock, with one word list to work out) or
# a text edited: the words of the row before go out, those after come in; a
# word in both does not move.
COUNT_UPDATED = """
CREATE FUNCTION ehs_count_updated_words() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF OLD.number IS NULL THEN
    INSERT INTO incident_word_counts (organization_id, word, incidents)
    SELECT NEW.organization_id, w, 1 FROM unnest(ehs_search_words(NEW.title, NEW.description, NEW.location_detail)) AS w
    ORDER BY w
    ON CONFLICT (organization_id, word) DO UPDATE SET incidents = incident_word_counts.incidents + excluded.incidents;
    RETURN NULL;
  END IF;
  INSERT INTO incident_word_counts (organization_id, word, incidents)
  SELECT organization_id, word, sum(n) FROM (
    SELECT OLD.organization_id, w, -1 FROM unnest(ehs_search_words(OLD.title, OLD.description, OLD.location_detail)) AS w
    UNION ALL
    SELECT NEW.organization_id, w, 1 FROM unnest(ehs_search_words(NEW.title, NEW.description, NEW.location_detail)) AS w
    WHERE NEW.number IS NOT NULL
  ) AS moved (organization_id, word, n)
  GROUP BY organization_id, word HAVING sum(n) <> 0 ORDER BY organization_id, word
  ON CONFLICT (organization_id, word) DO UPDATE SET incidents = incident_word_counts.incidents + excluded.incidents;
  RETURN NULL;
END $$
"""
# Incidents are not deleted by the application; a deletion by hand (or a
# test's clean-up) must not leave counts that claim matches that are gone.
COUNT_DELETED = """
CREATE FUNCTION ehs_count_deleted_words() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO incident_word_counts (organization_id, word, incidents)
  SELECT gone.organization_id, w, -count(*)
  FROM gone, unnest(ehs_search_words(gone.title, gone.description, gone.location_detail)) AS w
  WHERE gone.number IS NOT NULL
  GROUP BY gone.organization_id, w ORDER BY gone.organization_id, w
  ON CONFLICT (organization_id, word) DO UPDATE SET incidents = incident_word_counts.incidents + excluded.incidents;
  RETURN NULL;
END $$
"""
FORGET_ALL = """
CREATE FUNCTION ehs_forget_word_counts() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM incident_word_counts;
  RETURN NULL;
END $$
"""


def upgrade() -> None:
    if op.get_bind().dialect.name != 'postgresql':
        return
    # No write may fall between the counting below and the triggers.
    op.execute('LOCK TABLE incidents IN SHARE ROW EXCLUSIVE MODE')
    op.execute('CREATE TABLE incident_word_counts (organization_id integer NOT NULL, word text NOT NULL, '
               'incidents integer NOT NULL, '
               'CONSTRAINT pk_incident_word_counts PRIMARY KEY (organization_id, word))')
    op.execute('INSERT INTO incident_word_counts (organization_id, word, incidents) '
               'SELECT organization_id, w, count(*) '
               'FROM incidents, unnest(ehs_search_words(title, description, location_detail)) AS w '
               'WHERE number IS NOT NULL GROUP BY organization_id, w')
    op.execute('ANALYZE incident_word_counts')
    for function in (COUNT_INSERTED, COUNT_UPDATED, COUNT_DELETED, FORGET_ALL):
        op.execute(function)
    op.execute('CREATE TRIGGER incidents_count_inserted_words AFTER INSERT ON incidents '
               'REFERENCING NEW TABLE AS added FOR EACH STATEMENT EXECUTE FUNCTION ehs_count_inserted_words()')
    # Row-level, only when the row's counted words can change: a transition
    # does no work here.
    op.execute('CREATE TRIGGER incidents_count_updated_words AFTER UPDATE ON incidents FOR EACH ROW '
               'WHEN ((OLD.number IS NULL) <> (NEW.number IS NULL) '
               'OR OLD.organization_id <> NEW.organization_id '
               'OR NEW.number IS NOT NULL AND (OLD.title IS DISTINCT FROM NEW.title '
               'OR OLD.description IS DISTINCT FROM NEW.description '
               'OR OLD.location_detail IS DISTINCT FROM NEW.location_detail)) '
               'EXECUTE FUNCTION ehs_count_updated_words()')
    op.execute('CREATE TRIGGER incidents_count_deleted_words AFTER DELETE ON incidents '
               'REFERENCING OLD TABLE AS gone FOR EACH STATEMENT EXECUTE FUNCTION ehs_count_deleted_words()')
    op.execute('CREATE TRIGGER incidents_forget_word_counts AFTER TRUNCATE ON incidents '
               'FOR EACH STATEMENT EXECUTE FUNCTION ehs_forget_word_counts()')


def downgrade() -> None:
    if op.get_bind().dialect.name != 'postgresql':
        return
    op.execute('DROP TRIGGER incidents_forget_word_counts ON incidents')
    op.execute('DROP TRIGGER incidents_count_deleted_words ON incidents')
    op.execute('DROP TRIGGER incidents_count_updated_words ON incidents')
    op.execute('DROP TRIGGER incidents_count_inserted_words ON incidents')
    for function in ('ehs_forget_word_counts', 'ehs_count_deleted_words', 'ehs_count_updated_words',
                     'ehs_count_inserted_words'):
        op.execute(f'DROP FUNCTION {function}()')
    op.execute('DROP TABLE incident_word_counts')
