"""incidents.client_filer: who may replay a report's clientId

A retried create answers with the stored report only to the identity that
filed it (a user, an anonymous signed-in reporter, a reporting link). Named
reports filed before this revision are given to their reporter; anonymous
ones have no recorded filer and their clientId no longer replays.

Revision ID: 0007_client_filer
Revises: 0006_attachment_chunks
Create Date: 2026-12-01
"""
import sqlalchemy as sa
from alembic import op

revision = '0007_client_filer'
down_revision = '0006_attachment_chunks'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('incidents', schema=None) as batch_op:
        batch_op.add_column(sa.Column('client_filer', sa.String(length=40), nullable=True))
    op.execute("UPDATE incidents SET client_filer = 'user:' || CAST(reporter_id AS VARCHAR(20)) "
               "WHERE client_id IS NOT NULL AND reporter_id IS NOT NULL")


def downgrade() -> None:
    with op.batch_alter_table('incidents', schema=None) as batch_op:
        batch_op.drop_column('client_filer')
