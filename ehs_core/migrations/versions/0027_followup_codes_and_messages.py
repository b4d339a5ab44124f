"""follow-up of reports filed without a name: code hashes and messages

Revision ID: 0027_followup
Revises: 0026_people_involved
Create Date: 2026-11-28
"""
import sqlalchemy as sa
from alembic import op

import ehs_core.db

revision = '0027_followup'
down_revision = '0026_people_involved'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        'follow_up_codes',
        sa.Column('incident_id', sa.Integer(), autoincrement=False, nullable=False),
        sa.Column('code_hash', sa.String(length=64), nullable=False),
        sa.Column('created_at', ehs_core.db.UTCDateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(['incident_id'], ['incidents.id'],
                                name=op.f('fk_follow_up_codes_incident_id_incidents'), ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('incident_id', name=op.f('pk_follow_up_codes')),
        sa.UniqueConstraint('code_hash', name=op.f('uq_follow_up_codes_code_hash')),
    )
    op.create_table(
        'follow_up_messages',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('incident_id', sa.Integer(), nullable=False),
        sa.Column('direction', sa.String(length=20), nullable=False),
        sa.Column('body', sa.Text(), nullable=False),
        sa.Column('author_id', sa.Integer(), nullable=True),
        sa.Column('created_at', ehs_core.db.UTCDateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(['incident_id'], ['incidents.id'],
                                name=op.f('fk_follow_up_messages_incident_id_incidents'), ondelete='CASCADE'),
        sa.ForeignKeyConstraint(['author_id'], ['users.id'],
                                name=op.f('fk_follow_up_messages_author_id_users')),
        sa.PrimaryKeyConstraint('id', name=op.f('pk_follow_up_messages')),
    )
    op.create_index(op.f('ix_follow_up_messages_incident_id'), 'follow_up_messages', ['incident_id'],
                    unique=False)


def downgrade() -> None:
    op.drop_index(op.f('ix_follow_up_messages_incident_id'), table_name='follow_up_messages')
    op.drop_table('follow_up_messages')
    op.drop_table('follow_up_codes')
