"""one head again: 0009_queue_indexes and 0009_search_words were written side by side

Both revise 0008_failed_mail; this joins them (it changes nothing), so a
database that has either, both or neither comes to the same head.

Revision ID: 0010_one_head
Revises: 0009_queue_indexes, 0009_search_words
Create Date: 2026-12-02
"""

revision = '0010_one_head'
down_revision = ('0009_queue_indexes', '0009_search_words')
branch_labels = None
depends_on = None


def upgrade() -> None:
    pass


def downgrade() -> None:
    pass
