"""tallies in shards: a report no longer waits for another to commit to count

Every report adds to the same few tallies (its month's count, severity and
hour of the week; on one site and type, the same rows), by `INSERT … ON
CONFLICT DO UPDATE`, and a row so updated stays locked until the commit:
concurrent reports queued on those rows from their tallies to the end of
their commits, whatever the workers (issue #19). A tally is
now kept in up to 16 rows (`shard`, part of the key) that add up to it; on
PostgreSQL a transaction writes the shard its transaction id picks (the
column's default, `txid_current() % 16`), so concurrent writers mostly move
different rows, and every reader sums (they always did: a figure adds up
months, sites and types). SQLite has one writer at a time and writes shard 0.
The rows already kept become shard 0.

Revision ID: analytics_0004
Revises: analytics_0003
Create Date: 2026-11-26
"""
from alembic import op
import sqlalchemy as sa


revision = 'analytics_0004'
down_revision = 'analytics_0003'
branch_labels = None
depends_on = None

KEY = ['organization_id', 'kind', 'month', 'site_id', 'type', 'k1', 'k2']


def upgrade() -> None:
    with op.batch_alter_table('analytics_tallies', schema=None) as batch_op:
        batch_op.add_column(sa.Column('shard', sa.SmallInteger(), server_default=sa.text('0'), nullable=False))
        batch_op.drop_constraint('pk_analytics_tallies', type_='primary')
        batch_op.create_primary_key('pk_analytics_tallies', [*KEY, 'shard'])
    if op.get_bind().dialect.name == 'postgresql':
        op.execute('ALTER TABLE analytics_tallies ALTER COLUMN shard SET DEFAULT (txid_current() % 16)::smallint')


def downgrade() -> None:
    # Each tally's shards summed into one row, as the key had it before.
    op.execute('CREATE TABLE analytics_tallies_summed AS SELECT organization_id, kind, month, site_id, type, '
               'k1, k2, sum(n) AS n, sum(total) AS total, sum(closed) AS closed FROM analytics_tallies '
               'GROUP BY organization_id, kind, month, site_id, type, k1, k2')
    op.execute('DELETE FROM analytics_tallies')
    with op.batch_alter_table('analytics_tallies', schema=None) as batch_op:
        batch_op.drop_constraint('pk_analytics_tallies', type_='primary')
        batch_op.drop_column('shard')
        batch_op.create_primary_key('pk_analytics_tallies', KEY)
    op.execute('INSERT INTO analytics_tallies (organization_id, kind, month, site_id, type, k1, k2, n, total, '
               'closed) SELECT organization_id, kind, month, site_id, type, k1, k2, n, total, closed '
               'FROM analytics_tallies_summed')
    op.execute('DROP TABLE analytics_tallies_summed')
