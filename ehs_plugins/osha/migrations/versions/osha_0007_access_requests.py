"""Requests for copies of the records (1904.35(b)(2))

Revision ID: osha_0007
Revises: osha_0006
Create Date: 2026-11-28
"""
from alembic import op
import sqlalchemy as sa

import ehs_core.db


revision = 'osha_0007'
down_revision = 'osha_0006'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('osha_access_requests',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('organization_id', sa.Integer(), nullable=False),
    sa.Column('kind', sa.String(length=30), nullable=False),
    sa.Column('requester_name', sa.String(length=200), nullable=False),
    sa.Column('site_id', sa.Integer(), nullable=False),
    sa.Column('year', sa.SmallInteger(), nullable=False),
    sa.Column('case_id', sa.Integer(), nullable=True),
    sa.Column('received_at', ehs_core.db.UTCDateTime(timezone=True), nullable=False),
    sa.Column('due_by', ehs_core.db.UTCDateTime(timezone=True), nullable=False),
    sa.Column('created_by', sa.Integer(), nullable=True),
    sa.Column('fulfilled_at', ehs_core.db.UTCDateTime(timezone=True), nullable=True),
    sa.Column('given_to', sa.String(length=200), nullable=True),
    sa.Column('fulfilled_by', sa.Integer(), nullable=True),
    sa.ForeignKeyConstraint(['case_id'], ['osha_cases.id'], name=op.f('fk_osha_access_requests_case_id_osha_cases'), ondelete='SET NULL'),
    sa.ForeignKeyConstraint(['created_by'], ['users.id'], name=op.f('fk_osha_access_requests_created_by_users')),
    sa.ForeignKeyConstraint(['fulfilled_by'], ['users.id'], name=op.f('fk_osha_access_requests_fulfilled_by_users')),
    sa.ForeignKeyConstraint(['organization_id'], ['organizations.id'], name=op.f('fk_osha_access_requests_organization_id_organizations')),
    sa.ForeignKeyConstraint(['site_id'], ['sites.id'], name=op.f('fk_osha_access_requests_site_id_sites')),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_osha_access_requests'))
    )
    with op.batch_alter_table('osha_access_requests', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_osha_access_requests_organization_id'), ['organization_id'], unique=False)


def downgrade() -> None:
    with op.batch_alter_table('osha_access_requests', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_osha_access_requests_organization_id'))
    op.drop_table('osha_access_requests')
