"""an index for the 300 Log of a site and year

Found by the benchmark at 100,000 incidents: the log of a site-year read
every incident of the site (a bitmap heap scan of ~17,000 rows over ~4,200
pages for a site of 8) to keep the ~5,800 of the year. With (site_id,
occurred_at) the scan reads the year's rows only (~1,400 pages). The index
is on the core's table but serves this plugin's query, so it lives (and is
dropped) with the plugin's history.

Revision ID: osha_0004
Revises: osha_0003
Create Date: 2026-11-23
"""
from alembic import op

revision = 'osha_0004'
down_revision = 'osha_0003'
branch_labels = None
depends_on = None

NAME = 'ix_osha_incidents_site_occurred'


def upgrade() -> None:
    op.create_index(NAME, 'incidents', ['site_id', 'occurred_at'], unique=False)


def downgrade() -> None:
    op.drop_index(NAME, table_name='incidents')
