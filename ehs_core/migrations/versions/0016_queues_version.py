"""the organization's queues have a version, moved by every change of them

The menu's counts (what waits for this person: incidents to triage, to
investigate, to verify; their open corrective actions) were counted on
every page. They change only when an incident is filed or removed, or its
status or investigation lead changes, or a corrective action is added,
removed, reassigned or moves on. `queue_versions.version` moves with each
such change, in the transaction that makes it, whatever makes it (the API,
a page, a kiosk, a script's SQL): a worker keeps a person's counts with the
version they were counted at, and counts again only when the version it
reads with the page differs (`ehs_core.ui.directives`).

On PostgreSQL the version moves in COMMIT, by deferred constraint triggers,
once per transaction. Its row is a table of its own so that it is locked
only there, after everything the transaction did before COMMIT: on the
organization's row, which a change of reference data locks before it locks
the analytics tallies, or on the incident counter's, which a report filed
from a page holds while it writes its tallies, a transition waiting for it
in COMMIT while holding a tally would deadlock (seen with the organization's
row, in the test of concurrent writes). On SQLite it moves with each
changed row (one writer at a time there anyway). SQLite drops a table's
triggers with the table: a later migration that rebuilds `incidents` or
`corrective_actions` there (a batch operation that copies the table) must
create them again (`SQLITE_TRIGGERS`).

Revision ID: 0016_queues_version
Revises: 0015_severity_filter_index
Create Date: 2026-11-27
"""
import sqlalchemy as sa
from alembic import op

revision = '0016_queues_version'
down_revision = '0015_severity_filter_index'
branch_labels = None
depends_on = None

# Once per COMMIT and organization: the deferred triggers of a transaction
# all run in its COMMIT, after every change, so one move covers them all (a
# transaction-local setting holds the time the COMMIT statement started; a
# bulk load of 100,000 incidents moves the row once, not 100,000 times).
# The test suite's requests commit savepoints of one transaction: there
# `SET CONSTRAINTS … IMMEDIATE` runs the triggers as COMMIT would
# (`ehs_core.incidents.queues`), a statement of its own each time.
QUEUES_CHANGED = """
CREATE FUNCTION ehs_queues_changed() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  org integer;
BEGIN
  IF TG_TABLE_NAME = 'incidents' THEN
    org := COALESCE(NEW.organization_id, OLD.organization_id);
  ELSE
    SELECT organization_id INTO org FROM incidents WHERE id = COALESCE(NEW.incident_id, OLD.incident_id);
  END IF;
  IF org IS NULL OR current_setting('ehs.queues_moved_' || org, true) = statement_timestamp()::text THEN
    RETURN NULL;
  END IF;
  PERFORM set_config('ehs.queues_moved_' || org, statement_timestamp()::text, true);
  INSERT INTO queue_versions (organization_id, version) VALUES (org, 1)
  ON CONFLICT (organization_id) DO UPDATE SET version = queue_versions.version + 1;
  RETURN NULL;
END $$
"""

# The tables whose changes move the queues.
WATCHED = ('incidents', 'corrective_actions')

POSTGRESQL_TRIGGERS = (
    'CREATE CONSTRAINT TRIGGER incidents_queues_added_removed AFTER INSERT OR DELETE ON incidents '
    'DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION ehs_queues_changed()',
    'CREATE CONSTRAINT TRIGGER incidents_queues_updated AFTER UPDATE OF status, investigation_lead_id '
    'ON incidents DEFERRABLE INITIALLY DEFERRED FOR EACH ROW '
    'WHEN (OLD.status IS DISTINCT FROM NEW.status '
    'OR OLD.investigation_lead_id IS DISTINCT FROM NEW.investigation_lead_id) '
    'EXECUTE FUNCTION ehs_queues_changed()',
    'CREATE CONSTRAINT TRIGGER corrective_actions_queues_added_removed AFTER INSERT OR DELETE '
    'ON corrective_actions DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION ehs_queues_changed()',
    'CREATE CONSTRAINT TRIGGER corrective_actions_queues_updated AFTER UPDATE OF status, assignee_id '
    'ON corrective_actions DEFERRABLE INITIALLY DEFERRED FOR EACH ROW '
    'WHEN (OLD.status IS DISTINCT FROM NEW.status OR OLD.assignee_id IS DISTINCT FROM NEW.assignee_id) '
    'EXECUTE FUNCTION ehs_queues_changed()',
)

_MOVE = ('INSERT OR IGNORE INTO queue_versions (organization_id, version) VALUES ({org}, 0); '
         'UPDATE queue_versions SET version = version + 1 WHERE organization_id = {org};')
_OF_ACTION = '(SELECT organization_id FROM incidents WHERE id = {}.incident_id)'
SQLITE_TRIGGERS = (
    'CREATE TRIGGER incidents_queues_insert AFTER INSERT ON incidents '
    f'BEGIN {_MOVE.format(org="NEW.organization_id")} END',
    'CREATE TRIGGER incidents_queues_delete AFTER DELETE ON incidents '
    f'BEGIN {_MOVE.format(org="OLD.organization_id")} END',
    'CREATE TRIGGER incidents_queues_update AFTER UPDATE OF status, investigation_lead_id ON incidents '
    'WHEN OLD.status IS NOT NEW.status OR OLD.investigation_lead_id IS NOT NEW.investigation_lead_id '
    f'BEGIN {_MOVE.format(org="NEW.organization_id")} END',
    'CREATE TRIGGER corrective_actions_queues_insert AFTER INSERT ON corrective_actions '
    f'BEGIN {_MOVE.format(org=_OF_ACTION.format("NEW"))} END',
    'CREATE TRIGGER corrective_actions_queues_delete AFTER DELETE ON corrective_actions '
    f'BEGIN {_MOVE.format(org=_OF_ACTION.format("OLD"))} END',
    'CREATE TRIGGER corrective_actions_queues_update AFTER UPDATE OF status, assignee_id ON corrective_actions '
    'WHEN OLD.status IS NOT NEW.status OR OLD.assignee_id IS NOT NEW.assignee_id '
    f'BEGIN {_MOVE.format(org=_OF_ACTION.format("NEW"))} END',
)


def upgrade() -> None:
    op.create_table(
        'queue_versions',
        sa.Column('organization_id', sa.Integer(), nullable=False),
        sa.Column('version', sa.BigInteger(), server_default='0', nullable=False),
        sa.ForeignKeyConstraint(['organization_id'], ['organizations.id'],
                                name=op.f('fk_queue_versions_organization_id_organizations')),
        sa.PrimaryKeyConstraint('organization_id', name=op.f('pk_queue_versions')),
    )
    op.execute('INSERT INTO queue_versions (organization_id, version) SELECT id, 0 FROM organizations')
    if op.get_bind().dialect.name == 'postgresql':
        op.execute(QUEUES_CHANGED)
        for trigger in POSTGRESQL_TRIGGERS:
            op.execute(trigger)
    else:
        for trigger in SQLITE_TRIGGERS:
            op.execute(trigger)


def downgrade() -> None:
    if op.get_bind().dialect.name == 'postgresql':
        for table in WATCHED:
            op.execute(f'DROP TRIGGER {table}_queues_added_removed ON {table}')
            op.execute(f'DROP TRIGGER {table}_queues_updated ON {table}')
        op.execute('DROP FUNCTION ehs_queues_changed()')
    else:
        for table in WATCHED:
            for event in ('insert', 'delete', 'update'):
                op.execute(f'DROP TRIGGER {table}_queues_{event}')
    op.drop_table('queue_versions')
