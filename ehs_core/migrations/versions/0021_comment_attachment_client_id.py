"""comments and attachments take an optional clientId (idempotency key)

A comment or an upload sent again after a dropped connection was stored
twice (issue 35). With a clientId, the second request is answered with the
first (200), as reports already are.

Revision ID: 0021_client_ids
Revises: 0020_outbox
Create Date: 2026-11-28
"""
import sqlalchemy as sa
from alembic import op

revision = '0021_client_ids'
down_revision = '0020_outbox'
branch_labels = None
depends_on = None


def upgrade() -> None:
    for table in ('comments', 'attachments'):
        with op.batch_alter_table(table) as batch:
            batch.add_column(sa.Column('client_id', sa.String(length=64), nullable=True))
        op.create_index(f'uq_{table}_incident_id_client_id', table, ['incident_id', 'client_id'], unique=True)


def downgrade() -> None:
    for table in ('comments', 'attachments'):
        op.drop_index(f'uq_{table}_incident_id_client_id', table_name=table)
        with op.batch_alter_table(table) as batch:
            batch.drop_column('client_id')
