"""incidents.investigation_lead_id: the investigation's lead, copied for the queues

"Under investigation and waiting for me" (no lead, or mine) checked the
investigation of every incident under investigation, an index probe each,
on every page's menu, growing with the organization's records. The lead is now copied onto the incident by the one operation
that sets it (ehs_core/investigation/services.py), and a partial index
over the incidents under investigation answers the queue.

Revision ID: 0012_investigation_lead
Revises: 0011_reference_version
Create Date: 2026-11-23
"""
import sqlalchemy as sa
from alembic import op

revision = '0012_investigation_lead'
down_revision = '0011_reference_version'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("incidents") as batch:
        batch.add_column(sa.Column("investigation_lead_id", sa.Integer(), nullable=True))
    op.execute("UPDATE incidents SET investigation_lead_id = (SELECT investigations.lead_id FROM investigations "
               "WHERE investigations.incident_id = incidents.id) "
               "WHERE EXISTS (SELECT 1 FROM investigations WHERE investigations.incident_id = incidents.id "
               "AND investigations.lead_id IS NOT NULL)")
    where = sa.text("status = 'investigation'")
    op.create_index("ix_incidents_investigation_lead", "incidents", ["organization_id", "investigation_lead_id"],
                    postgresql_where=where, sqlite_where=where)


def downgrade() -> None:
    op.drop_index("ix_incidents_investigation_lead", table_name="incidents")
    with op.batch_alter_table("incidents") as batch:
        batch.drop_column("investigation_lead_id")
