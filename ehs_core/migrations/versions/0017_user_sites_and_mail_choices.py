"""user_sites: the sites a person works at; users.mail_off: the kinds of
follow-up mail a person turned off

An admin gives each person the sites they work at (none means all): their
home queues, list, actions and dashboard open on those sites, and a site's
supervisors hear of its serious reports. Each person may turn off the
follow-up mails their role does not require (issue #36 items 9 and 10).

Revision ID: 0017_user_sites_and_mail_choices
Revises: 0016_queues_version
Create Date: 2026-11-28
"""
import sqlalchemy as sa
from alembic import op

revision = '0017_user_sites_and_mail_choices'
down_revision = '0016_queues_version'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "user_sites",
        sa.Column("user_id", sa.Integer(), sa.ForeignKey("users.id", ondelete="CASCADE"), primary_key=True),
        sa.Column("site_id", sa.Integer(), sa.ForeignKey("sites.id", ondelete="CASCADE"), primary_key=True),
    )
    op.create_index("ix_user_sites_site_id", "user_sites", ["site_id"])
    with op.batch_alter_table("users") as batch:
        batch.add_column(sa.Column("mail_off", sa.JSON(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("users") as batch:
        batch.drop_column("mail_off")
    op.drop_index("ix_user_sites_site_id", table_name="user_sites")
    op.drop_table("user_sites")
