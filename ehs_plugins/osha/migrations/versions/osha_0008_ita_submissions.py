"""Filings with OSHA's ITA API (1904.41)

Revision ID: osha_0008
Revises: osha_0007
Create Date: 2026-11-28
"""
from alembic import op
import sqlalchemy as sa

import ehs_core.db


revision = 'osha_0008'
down_revision = 'osha_0007'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('osha_ita_submissions',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('organization_id', sa.Integer(), nullable=False),
    sa.Column('site_id', sa.Integer(), nullable=False),
    sa.Column('year', sa.SmallInteger(), nullable=False),
    sa.Column('dry_run', sa.Boolean(), nullable=False),
    sa.Column('status', sa.String(length=10), nullable=False),
    sa.Column('change_reason', sa.String(length=100), nullable=True),
    sa.Column('with_case_data', sa.Boolean(), nullable=False),
    sa.Column('confirmation', sa.String(length=200), nullable=True),
    sa.Column('errors', sa.Text(), nullable=True),
    sa.Column('answer', sa.Text(), nullable=True),
    sa.Column('requested_by', sa.Integer(), nullable=True),
    sa.Column('created_at', ehs_core.db.UTCDateTime(timezone=True), nullable=False),
    sa.Column('finished_at', ehs_core.db.UTCDateTime(timezone=True), nullable=True),
    sa.ForeignKeyConstraint(['organization_id'], ['organizations.id'], name=op.f('fk_osha_ita_submissions_organization_id_organizations')),
    sa.ForeignKeyConstraint(['requested_by'], ['users.id'], name=op.f('fk_osha_ita_submissions_requested_by_users')),
    sa.ForeignKeyConstraint(['site_id'], ['sites.id'], name=op.f('fk_osha_ita_submissions_site_id_sites')),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_osha_ita_submissions'))
    )
    with op.batch_alter_table('osha_ita_submissions', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_osha_ita_submissions_organization_id'), ['organization_id'], unique=False)


def downgrade() -> None:
    with op.batch_alter_table('osha_ita_submissions', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_osha_ita_submissions_organization_id'))
    op.drop_table('osha_ita_submissions')
