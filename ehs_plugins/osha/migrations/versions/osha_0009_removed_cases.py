"""osha_removed_cases: a removed injury case is kept (29 CFR 1904.33)

Revision ID: osha_0009
Revises: osha_0008
"""
import sqlalchemy as sa
from alembic import op

import ehs_core.db

revision = 'osha_0009'
down_revision = 'osha_0008'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        'osha_removed_cases',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('case_id', sa.Integer(), nullable=False),
        sa.Column('incident_id', sa.Integer(), nullable=False),
        sa.Column('data', sa.Text(), nullable=False),
        sa.Column('removed_at', ehs_core.db.UTCDateTime(timezone=True), nullable=False),
        sa.Column('removed_by_id', sa.Integer(), nullable=True),
        sa.ForeignKeyConstraint(['incident_id'], ['incidents.id'],
                                name=op.f('fk_osha_removed_cases_incident_id_incidents')),
        sa.ForeignKeyConstraint(['removed_by_id'], ['users.id'],
                                name=op.f('fk_osha_removed_cases_removed_by_id_users')),
        sa.PrimaryKeyConstraint('id', name=op.f('pk_osha_removed_cases')),
    )
    op.create_index(op.f('ix_osha_removed_cases_case_id'), 'osha_removed_cases', ['case_id'], unique=False)
    op.create_index(op.f('ix_osha_removed_cases_incident_id'), 'osha_removed_cases', ['incident_id'],
                    unique=False)


def downgrade() -> None:
    op.drop_index(op.f('ix_osha_removed_cases_incident_id'), table_name='osha_removed_cases')
    op.drop_index(op.f('ix_osha_removed_cases_case_id'), table_name='osha_removed_cases')
    op.drop_table('osha_removed_cases')
