"""tallies: the sums the statistics read, and each incident's counted state

Revision ID: analytics_0003
Revises: analytics_0002
Create Date: 2026-11-23

Creates the tables and fills them from the rows (`tallies.rebuild`, with the
settings and injury-figures provider of the application being migrated), so
statistics answer from them at once. Run without the application (plain
alembic), the tables stay empty and statistics read the rows until
`python -m ehs_plugins.analytics.tallies CONFIG.ini` fills them.
"""
from alembic import op
import sqlalchemy as sa

import ehs_core.db


revision = 'analytics_0003'
down_revision = 'analytics_0002'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('analytics_tallies',
    sa.Column('organization_id', sa.Integer(), nullable=False),
    sa.Column('kind', sa.String(length=10), nullable=False),
    sa.Column('month', sa.Integer(), nullable=False),
    sa.Column('site_id', sa.Integer(), nullable=False),
    sa.Column('type', sa.String(length=64), nullable=False),
    sa.Column('k1', sa.String(length=100), nullable=False),
    sa.Column('k2', sa.Integer(), nullable=False),
    sa.Column('n', sa.BigInteger(), nullable=False),
    sa.Column('total', sa.BigInteger(), nullable=False),
    sa.Column('closed', sa.BigInteger(), nullable=False),
    sa.PrimaryKeyConstraint('organization_id', 'kind', 'month', 'site_id', 'type', 'k1', 'k2',
                            name=op.f('pk_analytics_tallies'))
    )
    op.create_table('analytics_counted',
    sa.Column('incident_id', sa.Integer(), nullable=False),
    sa.Column('organization_id', sa.Integer(), nullable=False),
    sa.Column('zone', sa.String(length=64), nullable=True),
    sa.Column('state', sa.JSON(), nullable=False),
    sa.ForeignKeyConstraint(['incident_id'], ['incidents.id'], name=op.f('fk_analytics_counted_incident_id_incidents')),
    sa.PrimaryKeyConstraint('incident_id', name=op.f('pk_analytics_counted'))
    )
    with op.batch_alter_table('analytics_counted', schema=None) as batch_op:
        batch_op.create_index('ix_analytics_counted_organization', ['organization_id'], unique=False)
    op.create_table('analytics_tally_state',
    sa.Column('organization_id', sa.Integer(), nullable=False),
    sa.Column('server_zone', sa.String(length=64), nullable=False),
    sa.Column('built_at', ehs_core.db.UTCDateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['organization_id'], ['organizations.id'], name=op.f('fk_analytics_tally_state_organization_id_organizations')),
    sa.PrimaryKeyConstraint('organization_id', name=op.f('pk_analytics_tally_state'))
    )

    registry = op.get_context().config.attributes.get("registry")
    if registry is not None:
        from sqlalchemy.orm import Session

        from ehs_plugins.analytics.rebuild import rebuild_all

        with Session(bind=op.get_bind(), join_transaction_mode="create_savepoint") as session:
            rebuild_all(session, registry)
            session.commit()


def downgrade() -> None:
    op.drop_table('analytics_tally_state')
    with op.batch_alter_table('analytics_counted', schema=None) as batch_op:
        batch_op.drop_index('ix_analytics_counted_organization')
    op.drop_table('analytics_counted')
    op.drop_table('analytics_tallies')
