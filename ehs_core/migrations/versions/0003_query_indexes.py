"""indexes for the list search, statistics and recordkeeping queries

Found by the benchmark (bench/README.md) at 100,000 incidents:

- incidents (organization_id, occurred_at): statistics and the OSHA log and
  rates select incidents by when they occurred; without it every period,
  even an empty one, read the whole table.
- corrective_actions (status, due_date) and (due_date): pending actions for
  the overview, actions due in an analytics period.
- title, description, location_detail: the list's `q` filter matches them
  with ILIKE '%…%' on PostgreSQL, which trigram indexes (pg_trgm, GIN) serve;
  fastupdate is off, so that writes go straight into the index instead of a
  pending list that every search would scan (and that made the planner fall
  back to a sequential scan after a few hundred writes); SQLite has no such
  index type and gets plain ones of the same names.

Revision ID: 0003_query_indexes
Revises: 0002_incidents
Create Date: 2026-11-22
"""
from alembic import op

revision = '0003_query_indexes'
down_revision = '0002_incidents'
branch_labels = None
depends_on = None

TRIGRAM = ("title", "description", "location_detail")


def upgrade() -> None:
    with op.batch_alter_table('incidents', schema=None) as batch_op:
        batch_op.create_index('ix_incidents_org_occurred', ['organization_id', 'occurred_at'], unique=False)
    with op.batch_alter_table('corrective_actions', schema=None) as batch_op:
        batch_op.create_index('ix_corrective_actions_status_due_date', ['status', 'due_date'], unique=False)
        batch_op.create_index('ix_corrective_actions_due_date', ['due_date'], unique=False)
    if op.get_bind().dialect.name == 'postgresql':
        # pg_trgm is a trusted extension (PostgreSQL 13+): the database owner may create it.
        op.execute('CREATE EXTENSION IF NOT EXISTS pg_trgm')
    with op.batch_alter_table('incidents', schema=None) as batch_op:
        for column in TRIGRAM:
            batch_op.create_index(f'ix_incidents_{column}_trgm', [column], unique=False,
                                  postgresql_using='gin', postgresql_ops={column: 'gin_trgm_ops'},
                                  postgresql_with={'fastupdate': 'off'})


def downgrade() -> None:
    with op.batch_alter_table('incidents', schema=None) as batch_op:
        for column in TRIGRAM:
            batch_op.drop_index(f'ix_incidents_{column}_trgm')
    with op.batch_alter_table('corrective_actions', schema=None) as batch_op:
        batch_op.drop_index('ix_corrective_actions_due_date')
        batch_op.drop_index('ix_corrective_actions_status_due_date')
    with op.batch_alter_table('incidents', schema=None) as batch_op:
        batch_op.drop_index('ix_incidents_org_occurred')
