"""organizations.reference_version: the version of the reference data workers keep in memory

Sites, areas and users (and what plugins track) are cached by each worker
process, keyed by this number, which the identity statement reads with the
session; every change to them bumps it in the same transaction
(ehs_core/refdata.py).

Revision ID: 0011_reference_version
Revises: 0010_one_head
Create Date: 2026-11-23
"""
import sqlalchemy as sa
from alembic import op

revision = '0011_reference_version'
down_revision = '0010_one_head'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("organizations") as batch:
        batch.add_column(sa.Column("reference_version", sa.Integer(), nullable=False, server_default="0"))


def downgrade() -> None:
    with op.batch_alter_table("organizations") as batch:
        batch.drop_column("reference_version")
