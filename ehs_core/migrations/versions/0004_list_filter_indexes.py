"""indexes for the incident list's filters

Found by the benchmark (bench/README.md): the list filtered by type and
site counted its matches through a bitmap heap scan of every incident of the
site. With an index that leads with the filtered columns and ends with
`number`, the page is read backwards from the index and the total is an
index-only count:

- (organization_id, site_id, type, number): siteId, siteId + type;
- (organization_id, type, number): type;
- (organization_id, status, number): status (open, in investigation …).

ix_incidents_created (organization_id, number) duplicated the unique
constraint uq_incidents_org_number and only cost writes: dropped.

Revision ID: 0004_list_filter_indexes
Revises: 0003_query_indexes
Create Date: 2026-11-22
"""
from alembic import op

revision = '0004_list_filter_indexes'
down_revision = '0003_query_indexes'
branch_labels = None
depends_on = None

INDEXES = {
    'ix_incidents_org_site_type_number': ['organization_id', 'site_id', 'type', 'number'],
    'ix_incidents_org_type_number': ['organization_id', 'type', 'number'],
    'ix_incidents_org_status_number': ['organization_id', 'status', 'number'],
}


def upgrade() -> None:
    with op.batch_alter_table('incidents', schema=None) as batch_op:
        batch_op.drop_index('ix_incidents_created')
        for name, columns in INDEXES.items():
            batch_op.create_index(name, columns, unique=False)


def downgrade() -> None:
    with op.batch_alter_table('incidents', schema=None) as batch_op:
        for name in INDEXES:
            batch_op.drop_index(name)
        batch_op.create_index('ix_incidents_created', ['organization_id', 'number'], unique=False)
