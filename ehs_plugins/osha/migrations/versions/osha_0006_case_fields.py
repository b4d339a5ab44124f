"""Case fields of Recordkeeping II: time unknown, learned at, periods, Form 301 preparer

Revision ID: osha_0006
Revises: osha_0005
Create Date: 2026-11-28
"""
from alembic import op
import sqlalchemy as sa

import ehs_core.db


revision = 'osha_0006'
down_revision = 'osha_0005'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('osha_cases', schema=None) as batch_op:
        batch_op.add_column(sa.Column('time_unknown', sa.Boolean(), nullable=False, server_default=sa.false()))
        batch_op.add_column(sa.Column('learned_at', ehs_core.db.UTCDateTime(timezone=True), nullable=True))
        batch_op.add_column(sa.Column('periods', sa.Text(), nullable=True))
        batch_op.add_column(sa.Column('preparer_name', sa.String(length=200), nullable=True))
        batch_op.add_column(sa.Column('preparer_title', sa.String(length=200), nullable=True))
        batch_op.add_column(sa.Column('preparer_phone', sa.String(length=40), nullable=True))
        batch_op.add_column(sa.Column('prepared_at', sa.Date(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table('osha_cases', schema=None) as batch_op:
        for name in ('prepared_at', 'preparer_phone', 'preparer_title', 'preparer_name', 'periods',
                     'learned_at', 'time_unknown'):
            batch_op.drop_column(name)
