"""a report takes its number in the transaction that files it, on every database

Migration 0014 numbered a report filed through the API in its COMMIT, by a
deferred trigger, and the number was read back after commit on another
connection: after a PostgreSQL restart a report was answered with
`"number": null` and its notice said "None reported" (issue 35). Reports
are now numbered by `incidents.filing.file_incident` inside the filing
transaction (`numbering.give_number`), on PostgreSQL as on SQLite and in
the test suite alike; the trigger found every report numbered already and
did nothing, so it goes.

Revision ID: 0019_number_in_transaction
Revises: 0018_action_evidence
Create Date: 2026-11-28
"""
from alembic import op

revision = '0019_number_in_transaction'
down_revision = '0018_action_evidence'
branch_labels = None
depends_on = None

# Migration 0014's function, for a downgrade.
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
    op.execute('DROP TRIGGER IF EXISTS incidents_number_at_commit ON incidents')
    op.execute('DROP FUNCTION IF EXISTS ehs_number_at_commit()')


def downgrade() -> None:
    if op.get_bind().dialect.name != 'postgresql':
        return
    op.execute(NUMBER_AT_COMMIT)
    op.execute('CREATE CONSTRAINT TRIGGER incidents_number_at_commit AFTER INSERT ON incidents '
               'DEFERRABLE INITIALLY DEFERRED FOR EACH ROW WHEN (NEW.number IS NULL) '
               'EXECUTE FUNCTION ehs_number_at_commit()')
