"""outbox_jobs: mail and jobs written in the transaction that causes them

Jobs were queued in Redis after commit and lost whenever Redis refused,
hung or crashed, or a worker was stopped mid-job (issue 35). They are now
rows of the database, written with what caused them; Redis only wakes the
runner. `job_runner_beats` tells readiness that a runner is alive.

Revision ID: 0020_outbox
Revises: 0019_number_in_transaction
Create Date: 2026-11-28
"""
import sqlalchemy as sa
from alembic import op

import ehs_core.db

revision = '0020_outbox'
down_revision = '0019_number_in_transaction'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        'outbox_jobs',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('job', sa.String(length=100), nullable=False),
        sa.Column('payload', sa.Text(), nullable=False),
        sa.Column('key', sa.String(length=200), nullable=True),
        sa.Column('request_id', sa.String(length=64), nullable=True),
        sa.Column('status', sa.String(length=10), nullable=False),
        sa.Column('attempts', sa.Integer(), nullable=False),
        sa.Column('due_at', ehs_core.db.UTCDateTime(timezone=True), nullable=False),
        sa.Column('claimed_until', ehs_core.db.UTCDateTime(timezone=True), nullable=True),
        sa.Column('created_at', ehs_core.db.UTCDateTime(timezone=True), nullable=False),
        sa.Column('finished_at', ehs_core.db.UTCDateTime(timezone=True), nullable=True),
        sa.Column('last_error', sa.Text(), nullable=True),
        sa.PrimaryKeyConstraint('id', name=op.f('pk_outbox_jobs')),
        sa.UniqueConstraint('key', name=op.f('uq_outbox_jobs_key')),
    )
    op.create_index('ix_outbox_jobs_status_due_at', 'outbox_jobs', ['status', 'due_at'], unique=False)
    op.create_table(
        'job_runner_beats',
        sa.Column('name', sa.String(length=200), nullable=False),
        sa.Column('beat_at', ehs_core.db.UTCDateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint('name', name=op.f('pk_job_runner_beats')),
    )


def downgrade() -> None:
    op.drop_table('job_runner_beats')
    op.drop_index('ix_outbox_jobs_status_due_at', table_name='outbox_jobs')
    op.drop_table('outbox_jobs')
