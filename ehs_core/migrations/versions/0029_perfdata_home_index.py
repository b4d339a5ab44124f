"""an index of the incidents by when they were reported: home's serious incidents (issue #42 item 2)

Home's "serious incidents" counts the organization's high and critical
incidents reported or occurred in the last 30 days; with an index on
(organization_id, occurred_at) only, PostgreSQL read every high and
critical incident of the organization to keep the month's few. With
(organization_id, created_at) beside it the two ranges are ORed in a bitmap,
and only the month's incidents are read.

Revision ID: 0029_perfdata_home_index
Revises: 0028_perfdata_search_stems
Create Date: 2026-11-28
"""
from alembic import op

revision = '0029_perfdata_home_index'
down_revision = '0028_perfdata_search_stems'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index('ix_incidents_org_created', 'incidents', ['organization_id', 'created_at'], unique=False)


def downgrade() -> None:
    op.drop_index('ix_incidents_org_created', table_name='incidents')
