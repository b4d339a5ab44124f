"""300A certification per site and year

Revision ID: osha_0003
Revises: osha_0002
Create Date: 2026-12-01
"""
from alembic import op
import sqlalchemy as sa

import ehs_core.db


revision = 'osha_0003'
down_revision = 'osha_0002'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('osha_certifications',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('site_id', sa.Integer(), nullable=False),
    sa.Column('year', sa.SmallInteger(), nullable=False),
    sa.Column('executive_name', sa.String(length=200), nullable=True),
    sa.Column('executive_title', sa.String(length=200), nullable=True),
    sa.Column('phone', sa.String(length=40), nullable=True),
    sa.Column('certified_on', sa.Date(), nullable=True),
    sa.Column('updated_at', ehs_core.db.UTCDateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['site_id'], ['sites.id'], name=op.f('fk_osha_certifications_site_id_sites')),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_osha_certifications')),
    sa.UniqueConstraint('site_id', 'year', name='uq_osha_certifications_site_year')
    )
    with op.batch_alter_table('osha_certifications', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_osha_certifications_site_id'), ['site_id'], unique=False)


def downgrade() -> None:
    with op.batch_alter_table('osha_certifications', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_osha_certifications_site_id'))
    op.drop_table('osha_certifications')
