"""attachment_chunks: attachment bytes kept in the database

With `ehs.storage = database` every host of a deployment reads the photos
from the PostgreSQL server they already share, in chunks of 1 MiB
(ehs_core/attachments/backends/database.py).

Revision ID: 0006_attachment_chunks
Revises: 0005_number_taken_last
Create Date: 2026-11-23
"""
import sqlalchemy as sa
from alembic import op

revision = '0006_attachment_chunks'
down_revision = '0005_number_taken_last'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        'attachment_chunks',
        sa.Column('storage_name', sa.String(length=64), nullable=False),
        sa.Column('seq', sa.Integer(), nullable=False),
        sa.Column('data', sa.LargeBinary(), nullable=False),
        sa.PrimaryKeyConstraint('storage_name', 'seq', name=op.f('pk_attachment_chunks')),
    )
    if op.get_bind().dialect.name == 'postgresql':
        # Photos and PDFs are already compressed: store the chunks out of line
        # without trying to compress them again.
        op.execute("ALTER TABLE attachment_chunks ALTER COLUMN data SET STORAGE EXTERNAL")


def downgrade() -> None:
    op.drop_table('attachment_chunks')
