"""PDFs of the printable forms made in the background

Revision ID: osha_0005
Revises: osha_0004
Create Date: 2026-11-23
"""
from alembic import op
import sqlalchemy as sa

import ehs_core.db


revision = 'osha_0005'
down_revision = 'osha_0004'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('osha_pdf_jobs',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('token', sa.String(length=64), nullable=False),
    sa.Column('organization_id', sa.Integer(), nullable=False),
    sa.Column('requested_by', sa.Integer(), nullable=False),
    sa.Column('kind', sa.String(length=20), nullable=False),
    sa.Column('site_id', sa.Integer(), nullable=False),
    sa.Column('year', sa.SmallInteger(), nullable=False),
    sa.Column('status', sa.String(length=10), nullable=False),
    sa.Column('sheets_done', sa.Integer(), nullable=False),
    sa.Column('sheets_total', sa.Integer(), nullable=False),
    sa.Column('filename', sa.String(length=200), nullable=False),
    sa.Column('pdf', sa.LargeBinary(), nullable=True),
    sa.Column('created_at', ehs_core.db.UTCDateTime(timezone=True), nullable=False),
    sa.Column('updated_at', ehs_core.db.UTCDateTime(timezone=True), nullable=False),
    sa.Column('finished_at', ehs_core.db.UTCDateTime(timezone=True), nullable=True),
    sa.ForeignKeyConstraint(['organization_id'], ['organizations.id'], name=op.f('fk_osha_pdf_jobs_organization_id_organizations')),
    sa.ForeignKeyConstraint(['requested_by'], ['users.id'], name=op.f('fk_osha_pdf_jobs_requested_by_users')),
    sa.ForeignKeyConstraint(['site_id'], ['sites.id'], name=op.f('fk_osha_pdf_jobs_site_id_sites')),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_osha_pdf_jobs')),
    sa.UniqueConstraint('token', name=op.f('uq_osha_pdf_jobs_token'))
    )
    with op.batch_alter_table('osha_pdf_jobs', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_osha_pdf_jobs_created_at'), ['created_at'], unique=False)


def downgrade() -> None:
    with op.batch_alter_table('osha_pdf_jobs', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_osha_pdf_jobs_created_at'))
    op.drop_table('osha_pdf_jobs')
