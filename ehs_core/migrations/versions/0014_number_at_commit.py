"""a report filed through the API takes its number in its COMMIT (PostgreSQL)

The organization's counter row is locked from the moment a report takes its
number to the end of its commit, and every report of the organization
waits for it. Taken by the last statement before COMMIT, the lock still
covered that statement's answer travelling to the worker, the worker's turn
on a CPU to send COMMIT, and COMMIT reaching PostgreSQL: on a busy 2-core
machine, two waits for a process to be scheduled, while every other report
queued (issue #19). A deferred constraint trigger now numbers
a report still unnumbered when its transaction commits, inside COMMIT:
the lock covers the counter's and the report's UPDATE and the WAL flush,
and nothing outside PostgreSQL. Numbers stay gap-free: the counter moves in
the same transaction as the report, and a failed commit takes both back.

A report numbered in its transaction (`filing.number_incident`: a page's
redirect, a kiosk's answer) is left as it is, and so are rows inserted
with their number (`ehs seed`). SQLite keeps numbering in the transaction
(one writer at a time there anyway).

Revision ID: 0014_number_at_commit
Revises: 0013_search_word_counts
Create Date: 2026-11-26
"""
from alembic import op

revision = '0014_number_at_commit'
down_revision = '0013_search_word_counts'
branch_labels = None
depends_on = None

# The row as it is now (numbered meanwhile, or deleted: nothing to do); a
# missing counter is made (as numbering.take_number does).
NUMBER_AT_COMMIT = """
CREATE FUNCTION ehs_number_at_commit() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  taken integer;
BEGIN
  PERFORM FROM incidents WHERE id = NEW.id AND number IS NULL;
  IF NOT FOUND THEN
    RETURN NULL;
  END IF;
  UPDATE incident_counters SET last_number = last_number + 1 WHERE organization_id = NEW.organization_id
  RETURNING last_number INTO taken;
  IF NOT FOUND THEN
    INSERT INTO incident_counters (organization_id, last_number) VALUES (NEW.organization_id, 1)
    ON CONFLICT (organization_id) DO UPDATE SET last_number = incident_counters.last_number + 1
    RETURNING last_number INTO taken;
  END IF;
  UPDATE incidents SET number = taken WHERE id = NEW.id;
  RETURN NULL;
END $$
"""


def upgrade() -> None:
    if op.get_bind().dialect.name != 'postgresql':
        return
    op.execute(NUMBER_AT_COMMIT)
    op.execute('CREATE CONSTRAINT TRIGGER incidents_number_at_commit AFTER INSERT ON incidents '
               'DEFERRABLE INITIALLY DEFERRED FOR EACH ROW WHEN (NEW.number IS NULL) '
               'EXECUTE FUNCTION ehs_number_at_commit()')


def downgrade() -> None:
    if op.get_bind().dialect.name != 'postgresql':
        return
    op.execute('DROP TRIGGER incidents_number_at_commit ON incidents')
    op.execute('DROP FUNCTION ehs_number_at_commit()')
