"""the organization's queues have a version, moved by every change of them

The menu's counts (what waits for this person: incidents to triage, to
investigate, to verify; their open corrective actions) were counted on
every page. They change only when an incident is filed or removed, or its
status or investigation lead changes, or a corrective action is added,
removed, reassigned or moves on. `incident_counters.queues_version` moves
with each such change, in the transaction that makes it, whatever makes it
(the API, a page, a kiosk, a script's SQL): a worker keeps a person's
counts with the version they were counted at, and counts again only when
the version it reads with the page differs (`ehs_core.ui.directives`).

On PostgreSQL the version moves in COMMIT, by deferred constraint triggers,
once per transaction: the organization's counter row is locked for the
commit only, as numbering at commit does (0014_number_at_commit). On
SQLite it moves with each changed row (one writer at a time there anyway).
SQLite drops a table's triggers with the table: a later migration that
rebuilds `incidents` or `corrective_actions` there (a batch operation
that copies the table) must create them again (`SQLITE_TRIGGERS`).

Revision ID: 0016_queues_version
Revises: 0015_severity_filter_index
Create Date: 2026-11-27
"""
import runpy
from pathlib import Path

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
  UPDATE incident_counters SET queues_version = queues_version + 1 WHERE organization_id = org;
  RETURN NULL;
END $$
"""

# A report numbered in its COMMIT (0014_number_at_commit) moves the version
# in the same UPDATE of the counter row, and marks it moved for this COMMIT:
# the report's own trigger then has nothing left to do (one UPDATE of the
# row the organization's reports queue for, not two).
NUMBER_AT_COMMIT = """
CREATE OR REPLACE FUNCTION ehs_number_at_commit() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  taken integer;
BEGIN
  PERFORM FROM incidents WHERE id = NEW.id AND number IS NULL;
  IF NOT FOUND THEN
    RETURN NULL;
  END IF;
  UPDATE incident_counters SET last_number = last_number + 1, queues_version = queues_version + 1
  WHERE organization_id = NEW.organization_id
  RETURNING last_number INTO taken;
  IF NOT FOUND THEN
    INSERT INTO incident_counters (organization_id, last_number) VALUES (NEW.organization_id, 1)
    ON CONFLICT (organization_id) DO UPDATE SET last_number = incident_counters.last_number + 1,
      queues_version = incident_counters.queues_version + 1
    RETURNING last_number INTO taken;
  END IF;
  PERFORM set_config('ehs.queues_moved_' || NEW.organization_id, statement_timestamp()::text, true);
  UPDATE incidents SET number = taken WHERE id = NEW.id;
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

_MOVE = 'UPDATE incident_counters SET queues_version = queues_version + 1 WHERE organization_id = '
_OF_ACTION = '(SELECT organization_id FROM incidents WHERE id = {}.incident_id)'
SQLITE_TRIGGERS = (
    f'CREATE TRIGGER incidents_queues_insert AFTER INSERT ON incidents BEGIN {_MOVE}NEW.organization_id; END',
    f'CREATE TRIGGER incidents_queues_delete AFTER DELETE ON incidents BEGIN {_MOVE}OLD.organization_id; END',
    'CREATE TRIGGER incidents_queues_update AFTER UPDATE OF status, investigation_lead_id ON incidents '
    'WHEN OLD.status IS NOT NEW.status OR OLD.investigation_lead_id IS NOT NEW.investigation_lead_id '
    f'BEGIN {_MOVE}NEW.organization_id; END',
    'CREATE TRIGGER corrective_actions_queues_insert AFTER INSERT ON corrective_actions '
    f'BEGIN {_MOVE}{_OF_ACTION.format("NEW")}; END',
    'CREATE TRIGGER corrective_actions_queues_delete AFTER DELETE ON corrective_actions '
    f'BEGIN {_MOVE}{_OF_ACTION.format("OLD")}; END',
    'CREATE TRIGGER corrective_actions_queues_update AFTER UPDATE OF status, assignee_id ON corrective_actions '
    'WHEN OLD.status IS NOT NEW.status OR OLD.assignee_id IS NOT NEW.assignee_id '
    f'BEGIN {_MOVE}{_OF_ACTION.format("NEW")}; END',
)


def upgrade() -> None:
    with op.batch_alter_table('incident_counters', schema=None) as batch_op:
        batch_op.add_column(sa.Column('queues_version', sa.BigInteger(), nullable=False,
                                      server_default='0'))
    if op.get_bind().dialect.name == 'postgresql':
        op.execute(QUEUES_CHANGED)
        op.execute(NUMBER_AT_COMMIT)
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
        numbering = runpy.run_path(str(Path(__file__).with_name('0014_number_at_commit.py')))
        op.execute(numbering['NUMBER_AT_COMMIT'].replace('CREATE FUNCTION', 'CREATE OR REPLACE FUNCTION'))
    else:
        for table in WATCHED:
            for event in ('insert', 'delete', 'update'):
                op.execute(f'DROP TRIGGER {table}_queues_{event}')
    with op.batch_alter_table('incident_counters', schema=None) as batch_op:
        batch_op.drop_column('queues_version')
