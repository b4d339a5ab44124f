"""the queues' version goes: nothing reads it

Migration 0016 gave each organization a version of its queues, moved by
triggers on every change of incidents and corrective actions, so that the
menu could keep each person's counts per worker. The menu now counts with
the page's own statement (issue #34: one way for data to reach a page), and
nothing reads the version any more: the triggers only cost every report,
transition and action a write of their own.

Revision ID: 0025_no_queue_versions
Revises: 0024_webhooks
Create Date: 2026-11-28
"""
import importlib.util
from pathlib import Path

from alembic import op

revision = '0025_no_queue_versions'
down_revision = '0024_webhooks'
branch_labels = None
depends_on = None

WATCHED = ('incidents', 'corrective_actions')


def upgrade() -> None:
    if op.get_bind().dialect.name == 'postgresql':
        for table in WATCHED:
            op.execute(f'DROP TRIGGER IF EXISTS {table}_queues_added_removed ON {table}')
            op.execute(f'DROP TRIGGER IF EXISTS {table}_queues_updated ON {table}')
        op.execute('DROP FUNCTION IF EXISTS ehs_queues_changed()')
    else:
        for table in WATCHED:
            for event in ('insert', 'delete', 'update'):
                op.execute(f'DROP TRIGGER IF EXISTS {table}_queues_{event}')
    op.drop_table('queue_versions')


def downgrade() -> None:
    # The table and triggers as 0016 made them.
    spec = importlib.util.spec_from_file_location('queues_version', Path(__file__).with_name('0016_queues_version.py'))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.upgrade()
