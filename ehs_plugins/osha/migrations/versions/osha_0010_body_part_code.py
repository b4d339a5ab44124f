"""osha_cases.body_part_code: the case's part of body as an OIICS 2.01 code

Revision ID: osha_0010
Revises: osha_0009
Create Date: 2026-11-28
"""
import sqlalchemy as sa
from alembic import op

revision = 'osha_0010'
down_revision = 'osha_0009'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('osha_cases', schema=None) as batch_op:
        batch_op.add_column(sa.Column('body_part_code', sa.String(length=4), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table('osha_cases', schema=None) as batch_op:
        batch_op.drop_column('body_part_code')
