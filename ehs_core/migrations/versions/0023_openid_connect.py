"""OpenID Connect sign-in: users' accounts at the provider, pending sign-ins

`user_identities` links a user to the provider's issuer and `sub` (linked by
verified e-mail at the first sign-in, matched by issuer and subject after);
`oidc_requests` keeps each sign-in sent to the provider until it comes back
(state's hash, nonce, PKCE verifier), for ten minutes at most.

Revision ID: 0023_openid_connect
Revises: 0022_obligations
Create Date: 2026-11-28
"""
import sqlalchemy as sa
from alembic import op

import ehs_core.db

revision = '0023_openid_connect'
down_revision = '0022_obligations'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        'user_identities',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('user_id', sa.Integer(), nullable=False),
        sa.Column('issuer', sa.String(length=500), nullable=False),
        sa.Column('subject', sa.String(length=255), nullable=False),
        sa.Column('created_at', ehs_core.db.UTCDateTime(timezone=True), nullable=False),
        sa.Column('last_used_at', ehs_core.db.UTCDateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(['user_id'], ['users.id'], name=op.f('fk_user_identities_user_id_users'),
                                ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('id', name=op.f('pk_user_identities')),
        sa.UniqueConstraint('issuer', 'subject', name='uq_user_identities_issuer_subject'),
    )
    op.create_index(op.f('ix_user_identities_user_id'), 'user_identities', ['user_id'], unique=False)
    op.create_table(
        'oidc_requests',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('state_hash', sa.String(length=64), nullable=False),
        sa.Column('nonce', sa.String(length=100), nullable=False),
        sa.Column('code_verifier', sa.String(length=128), nullable=False),
        sa.Column('next_path', sa.String(length=2000), nullable=False),
        sa.Column('expires_at', ehs_core.db.UTCDateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint('id', name=op.f('pk_oidc_requests')),
        sa.UniqueConstraint('state_hash', name=op.f('uq_oidc_requests_state_hash')),
    )
    op.create_index(op.f('ix_oidc_requests_expires_at'), 'oidc_requests', ['expires_at'], unique=False)


def downgrade() -> None:
    op.drop_index(op.f('ix_oidc_requests_expires_at'), table_name='oidc_requests')
    op.drop_table('oidc_requests')
    op.drop_index(op.f('ix_user_identities_user_id'), table_name='user_identities')
    op.drop_table('user_identities')
