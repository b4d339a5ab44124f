"""incidents.number is given as the last step of filing

A report is now stored first and takes its number just before commit, so
the organization's numbering lock covers one UPDATE and the commit instead
of the whole request (ehs_core/incidents/numbering.py). The column is
nullable for that moment inside the filing transaction; a session hook
refuses to commit an incident without a number.

Revision ID: 0005_number_taken_last
Revises: 0004_list_filter_indexes
Create Date: 2026-11-22
"""
import sqlalchemy as sa
from alembic import op

revision = '0005_number_taken_last'
down_revision = '0004_list_filter_indexes'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('incidents', schema=None) as batch_op:
        batch_op.alter_column('number', existing_type=sa.Integer(), nullable=True)


def downgrade() -> None:
    with op.batch_alter_table('incidents', schema=None) as batch_op:
        batch_op.alter_column('number', existing_type=sa.Integer(), nullable=False)
