"""start of the kiosk plugin's schema history

Revision ID: kiosk_0001
Revises:
Create Date: 2026-11-22

The plugin's own alembic branch, kept in its own version table
(alembic_version_kiosk) so the plugin can be enabled or disabled on its own.
Its tables arrive in the revisions that follow this one.
"""

revision = "kiosk_0001"
down_revision = None
branch_labels = ("kiosk",)
depends_on = None


def upgrade() -> None:
    pass


def downgrade() -> None:
    pass
