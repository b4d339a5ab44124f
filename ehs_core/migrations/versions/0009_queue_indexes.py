"""queue indexes: the menu's count reads only indexes

The menu on every page counts the incidents under investigation that are
not led by someone else: with the incident's id in the status index
(PostgreSQL) and the investigation's lead in an index of its own, that is
two index-only scans instead of reading every incident under investigation
and every investigation.

Revision ID: 0009_queue_indexes
Revises: 0008_failed_mail
Create Date: 2026-11-23
"""
from alembic import op

revision = '0009_queue_indexes'
down_revision = '0008_failed_mail'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.drop_index('ix_incidents_org_status_number', table_name='incidents')
    op.create_index('ix_incidents_org_status_number', 'incidents', ['organization_id', 'status', 'number'],
                    postgresql_include=['id'])
    op.create_index('ix_investigations_incident_lead', 'investigations', ['incident_id', 'lead_id'])


def downgrade() -> None:
    op.drop_index('ix_investigations_incident_lead', table_name='investigations')
    op.drop_index('ix_incidents_org_status_number', table_name='incidents')
    op.create_index('ix_incidents_org_status_number', 'incidents', ['organization_id', 'status', 'number'])
