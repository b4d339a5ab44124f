"""failed_mail: mail that will never be delivered, kept for admins

Revision ID: 0008_failed_mail
Revises: 0007_client_filer
Create Date: 2026-12-01
"""
import sqlalchemy as sa
from alembic import op

import ehs_core.db

revision = '0008_failed_mail'
down_revision = '0007_client_filer'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        'failed_mail',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('recipient', sa.String(length=320), nullable=False),
        sa.Column('subject', sa.Text(), nullable=False),
        sa.Column('error', sa.Text(), nullable=False),
        sa.Column('attempts', sa.Integer(), nullable=False),
        sa.Column('failed_at', ehs_core.db.UTCDateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint('id', name=op.f('pk_failed_mail')),
    )
    op.create_index(op.f('ix_failed_mail_failed_at'), 'failed_mail', ['failed_at'], unique=False)


def downgrade() -> None:
    op.drop_index(op.f('ix_failed_mail_failed_at'), table_name='failed_mail')
    op.drop_table('failed_mail')
