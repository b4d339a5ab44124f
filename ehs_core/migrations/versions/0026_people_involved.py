"""incident_people: the people involved in an incident, with a witness's statement

Revision ID: 0026_people_involved
Revises: 0025_no_queue_versions
Create Date: 2026-11-28
"""
import sqlalchemy as sa
from alembic import op

import ehs_core.db

revision = '0026_people_involved'
down_revision = '0025_no_queue_versions'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        'incident_people',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('incident_id', sa.Integer(), nullable=False),
        sa.Column('name', sa.String(length=200), nullable=False),
        sa.Column('involvement', sa.String(length=20), nullable=False),
        sa.Column('employment_type', sa.String(length=30), nullable=True),
        sa.Column('role', sa.String(length=200), nullable=True),
        sa.Column('contact', sa.String(length=200), nullable=True),
        sa.Column('statement_text', sa.Text(), nullable=True),
        sa.Column('statement_date', sa.Date(), nullable=True),
        sa.Column('statement_attachment_id', sa.Integer(), nullable=True),
        sa.Column('created_by_id', sa.Integer(), nullable=True),
        sa.Column('created_at', ehs_core.db.UTCDateTime(timezone=True), nullable=False),
        sa.Column('updated_at', ehs_core.db.UTCDateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(['incident_id'], ['incidents.id'],
                                name=op.f('fk_incident_people_incident_id_incidents')),
        sa.ForeignKeyConstraint(['statement_attachment_id'], ['attachments.id'],
                                name=op.f('fk_incident_people_statement_attachment_id_attachments'),
                                ondelete='SET NULL'),
        sa.ForeignKeyConstraint(['created_by_id'], ['users.id'],
                                name=op.f('fk_incident_people_created_by_id_users')),
        sa.PrimaryKeyConstraint('id', name=op.f('pk_incident_people')),
    )
    op.create_index(op.f('ix_incident_people_incident_id'), 'incident_people', ['incident_id'], unique=False)


def downgrade() -> None:
    op.drop_index(op.f('ix_incident_people_incident_id'), table_name='incident_people')
    op.drop_table('incident_people')
