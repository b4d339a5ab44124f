"""start of the analytics plugin's schema history

Revision ID: analytics_0001
Revises:
Create Date: 2026-11-22

The plugin's own alembic branch, kept in its own version table
(alembic_version_analytics) so the plugin can be enabled or disabled on its own.
Its tables arrive in the revisions that follow this one.
"""

revision = "analytics_0001"
down_revision = None
branch_labels = ("analytics",)
depends_on = None


def upgrade() -> None:
    pass


def downgrade() -> None:
    pass
