"""webhooks: endpoints admins register, and each event's delivery to them

Revision ID: 0024_webhooks
Revises: 0023_openid_connect
Create Date: 2026-11-28
"""
import sqlalchemy as sa
from alembic import op

import ehs_core.db

revision = '0024_webhooks'
down_revision = '0023_openid_connect'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        'webhook_endpoints',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('organization_id', sa.Integer(), nullable=False),
        sa.Column('url', sa.String(length=2000), nullable=False),
        sa.Column('description', sa.String(length=500), nullable=True),
        sa.Column('events', sa.JSON(), nullable=False),
        sa.Column('secret', sa.String(length=100), nullable=False),
        sa.Column('active', sa.Boolean(), nullable=False),
        sa.Column('disabled_reason', sa.String(length=500), nullable=True),
        sa.Column('failures_in_row', sa.Integer(), nullable=False),
        sa.Column('created_at', ehs_core.db.UTCDateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(['organization_id'], ['organizations.id'],
                                name=op.f('fk_webhook_endpoints_organization_id_organizations')),
        sa.PrimaryKeyConstraint('id', name=op.f('pk_webhook_endpoints')),
    )
    op.create_index(op.f('ix_webhook_endpoints_organization_id'), 'webhook_endpoints', ['organization_id'],
                    unique=False)
    op.create_table(
        'webhook_deliveries',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('endpoint_id', sa.Integer(), nullable=False),
        sa.Column('message_id', sa.String(length=60), nullable=False),
        sa.Column('event_type', sa.String(length=100), nullable=False),
        sa.Column('payload', sa.JSON(), nullable=False),
        sa.Column('body', sa.Text(), nullable=True),
        sa.Column('status', sa.String(length=20), nullable=False),
        sa.Column('attempts', sa.Integer(), nullable=False),
        sa.Column('next_attempt_at', ehs_core.db.UTCDateTime(timezone=True), nullable=False),
        sa.Column('last_error', sa.String(length=500), nullable=True),
        sa.Column('last_status_code', sa.Integer(), nullable=True),
        sa.Column('created_at', ehs_core.db.UTCDateTime(timezone=True), nullable=False),
        sa.Column('last_attempt_at', ehs_core.db.UTCDateTime(timezone=True), nullable=True),
        sa.Column('delivered_at', ehs_core.db.UTCDateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(['endpoint_id'], ['webhook_endpoints.id'],
                                name=op.f('fk_webhook_deliveries_endpoint_id_webhook_endpoints'),
                                ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('id', name=op.f('pk_webhook_deliveries')),
        sa.UniqueConstraint('message_id', name=op.f('uq_webhook_deliveries_message_id')),
    )
    op.create_index(op.f('ix_webhook_deliveries_endpoint_id'), 'webhook_deliveries', ['endpoint_id'],
                    unique=False)
    op.create_index('ix_webhook_deliveries_due', 'webhook_deliveries', ['status', 'next_attempt_at'],
                    unique=False)


def downgrade() -> None:
    op.drop_index('ix_webhook_deliveries_due', table_name='webhook_deliveries')
    op.drop_index(op.f('ix_webhook_deliveries_endpoint_id'), table_name='webhook_deliveries')
    op.drop_table('webhook_deliveries')
    op.drop_index(op.f('ix_webhook_endpoints_organization_id'), table_name='webhook_endpoints')
    op.drop_table('webhook_endpoints')
