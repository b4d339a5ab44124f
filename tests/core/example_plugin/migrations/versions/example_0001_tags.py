"""the example plugin's tags

Revision ID: example_0001
Revises:
Create Date: 2026-11-23
"""

import sqlalchemy as sa
from alembic import op

revision = "example_0001"
down_revision = None
branch_labels = ("example",)
depends_on = None


def upgrade() -> None:
    op.create_table(
        "example_tags",
        sa.Column("incident_id", sa.Integer(), sa.ForeignKey("incidents.id"), primary_key=True),
        sa.Column("tag", sa.String(length=50), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("example_tags")
