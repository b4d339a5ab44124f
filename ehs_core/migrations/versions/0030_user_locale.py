"""user locale: the language each person reads pages and mail in

Revision ID: 0030_user_locale
Revises: 0029_perfdata_home_index
Create Date: 2026-11-28
"""
import sqlalchemy as sa
from alembic import op

revision = '0030_user_locale'
down_revision = '0029_perfdata_home_index'
branch_labels = None
depends_on = None


def upgrade() -> None:
    # None: the installation's default locale (issue #39).
    with op.batch_alter_table('users') as batch:
        batch.add_column(sa.Column('locale', sa.String(length=10), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table('users') as batch:
        batch.drop_column('locale')
