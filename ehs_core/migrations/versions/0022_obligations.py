"""obligations: what is owed to a regulator, with its clock

One table for every regime's deadlines (a plugin declares the kind with
`config.add_obligation_kind`): the subject it is owed on, its due time, when
to remind, how it was closed, and markers that the reminder and the overdue
alert went out (each once).

Revision ID: 0022_obligations
Revises: 0021_client_ids
Create Date: 2026-11-28
"""
import sqlalchemy as sa
from alembic import op

import ehs_core.db

revision = '0022_obligations'
down_revision = '0021_client_ids'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        'obligations',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('organization_id', sa.Integer(), nullable=False),
        sa.Column('kind', sa.String(length=60), nullable=False),
        sa.Column('subject', sa.String(length=80), nullable=False),
        sa.Column('title', sa.String(length=200), nullable=False),
        sa.Column('incident_id', sa.Integer(), nullable=True),
        sa.Column('site_id', sa.Integer(), nullable=True),
        sa.Column('due_at', ehs_core.db.UTCDateTime(timezone=True), nullable=False),
        sa.Column('remind_at', ehs_core.db.UTCDateTime(timezone=True), nullable=False),
        sa.Column('status', sa.String(length=10), nullable=False),
        sa.Column('done_at', ehs_core.db.UTCDateTime(timezone=True), nullable=True),
        sa.Column('done_by_id', sa.Integer(), nullable=True),
        sa.Column('note', sa.Text(), nullable=True),
        sa.Column('reminded_at', ehs_core.db.UTCDateTime(timezone=True), nullable=True),
        sa.Column('alerted_at', ehs_core.db.UTCDateTime(timezone=True), nullable=True),
        sa.Column('created_at', ehs_core.db.UTCDateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(['done_by_id'], ['users.id'], name=op.f('fk_obligations_done_by_id_users')),
        sa.ForeignKeyConstraint(['incident_id'], ['incidents.id'],
                                name=op.f('fk_obligations_incident_id_incidents')),
        sa.ForeignKeyConstraint(['organization_id'], ['organizations.id'],
                                name=op.f('fk_obligations_organization_id_organizations')),
        sa.ForeignKeyConstraint(['site_id'], ['sites.id'], name=op.f('fk_obligations_site_id_sites')),
        sa.PrimaryKeyConstraint('id', name=op.f('pk_obligations')),
        sa.UniqueConstraint('organization_id', 'kind', 'subject', name='uq_obligations_kind_subject'),
    )
    with op.batch_alter_table('obligations', schema=None) as batch_op:
        batch_op.create_index('ix_obligations_org_status_due', ['organization_id', 'status', 'due_at'],
                              unique=False)
        batch_op.create_index('ix_obligations_status_remind', ['status', 'remind_at'], unique=False)
        batch_op.create_index('ix_obligations_incident_id', ['incident_id'], unique=False)


def downgrade() -> None:
    op.drop_table('obligations')
