"""an index for the incident list filtered by severity

The list filtered by severity ("high", "critical": what a safety team
triages by) had no index to read: its total was a sequential scan of every
incident, most of what the list did (EXPLAIN ANALYZE, severity=high).
Like the type's and the status's
(0004_list_filter_indexes), (organization_id, severity, number) serves both
the page, read backwards on number, and its total, an index-only count.

Revision ID: 0015_severity_filter_index
Revises: 0014_number_at_commit
Create Date: 2026-11-27
"""
from alembic import op

revision = '0015_severity_filter_index'
down_revision = '0014_number_at_commit'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('incidents', schema=None) as batch_op:
        batch_op.create_index('ix_incidents_org_severity_number', ['organization_id', 'severity', 'number'],
                              unique=False)


def downgrade() -> None:
    with op.batch_alter_table('incidents', schema=None) as batch_op:
        batch_op.drop_index('ix_incidents_org_severity_number')
