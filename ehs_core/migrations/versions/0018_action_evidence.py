"""attachments.action_id: a photo or PDF kept as evidence of a corrective
action (the assignee's proof that it was done, read by whoever verifies it)

Revision ID: 0018_action_evidence
Revises: 0017_user_sites_and_mail_choices
Create Date: 2026-11-28
"""
import sqlalchemy as sa
from alembic import op

revision = '0018_action_evidence'
down_revision = '0017_user_sites_and_mail_choices'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("attachments") as batch:
        batch.add_column(sa.Column("action_id", sa.Integer(), nullable=True))
        batch.create_foreign_key("fk_attachments_action_id_corrective_actions", "corrective_actions",
                                 ["action_id"], ["id"])
    op.create_index("ix_attachments_action_id", "attachments", ["action_id"])


def downgrade() -> None:
    op.drop_index("ix_attachments_action_id", table_name="attachments")
    with op.batch_alter_table("attachments") as batch:
        batch.drop_constraint("fk_attachments_action_id_corrective_actions", type_="foreignkey")
        batch.drop_column("action_id")
