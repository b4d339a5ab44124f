"""the calosha plugin's records: serious-injury facts, the violent incident
log, requests for a copy of the log

Revision ID: calosha_0001
Revises:
Create Date: 2026-11-28

The plugin's own alembic branch (alembic_version_calosha), so it can be
enabled or disabled on its own.
"""
import sqlalchemy as sa
from alembic import op

import ehs_core.db

revision = "calosha_0001"
down_revision = None
branch_labels = ("calosha",)
depends_on = None


def upgrade() -> None:
    op.create_table(
        "calosha_serious_facts",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("incident_id", sa.Integer(), nullable=False),
        sa.Column("died", sa.Boolean(), nullable=False),
        sa.Column("inpatient_hours", sa.Integer(), nullable=True),
        sa.Column("observation_only", sa.Boolean(), nullable=False),
        sa.Column("lost_member", sa.Boolean(), nullable=False),
        sa.Column("disfigurement", sa.Boolean(), nullable=False),
        sa.Column("learned_at", ehs_core.db.UTCDateTime(timezone=True), nullable=False),
        sa.Column("updated_at", ehs_core.db.UTCDateTime(timezone=True), nullable=False),
        sa.Column("updated_by_id", sa.Integer(), nullable=True),
        sa.ForeignKeyConstraint(["incident_id"], ["incidents.id"],
                                name=op.f("fk_calosha_serious_facts_incident_id_incidents")),
        sa.ForeignKeyConstraint(["updated_by_id"], ["users.id"],
                                name=op.f("fk_calosha_serious_facts_updated_by_id_users")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_calosha_serious_facts")),
        sa.UniqueConstraint("incident_id", name=op.f("uq_calosha_serious_facts_incident_id")),
    )
    op.create_table(
        "calosha_violent_incidents",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("incident_id", sa.Integer(), nullable=False),
        sa.Column("violence_type", sa.SmallInteger(), nullable=False),
        sa.Column("kinds", sa.JSON(), nullable=False),
        sa.Column("perpetrator_relation", sa.Text(), nullable=False),
        sa.Column("description", sa.Text(), nullable=False),
        sa.Column("circumstances", sa.Text(), nullable=False),
        sa.Column("where", sa.Text(), nullable=False),
        sa.Column("consequences", sa.Text(), nullable=False),
        sa.Column("security_called", sa.Boolean(), nullable=False),
        sa.Column("police_called", sa.Boolean(), nullable=False),
        sa.Column("actions_taken", sa.Text(), nullable=True),
        sa.Column("people", sa.JSON(), nullable=False),
        sa.Column("completed_by_id", sa.Integer(), nullable=True),
        sa.Column("completed_by_title", sa.String(length=200), nullable=False),
        sa.Column("completed_on", sa.Date(), nullable=False),
        sa.Column("created_at", ehs_core.db.UTCDateTime(timezone=True), nullable=False),
        sa.Column("updated_at", ehs_core.db.UTCDateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["completed_by_id"], ["users.id"],
                                name=op.f("fk_calosha_violent_incidents_completed_by_id_users")),
        sa.ForeignKeyConstraint(["incident_id"], ["incidents.id"],
                                name=op.f("fk_calosha_violent_incidents_incident_id_incidents")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_calosha_violent_incidents")),
        sa.UniqueConstraint("incident_id", name=op.f("uq_calosha_violent_incidents_incident_id")),
    )
    op.create_table(
        "calosha_log_requests",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("organization_id", sa.Integer(), nullable=False),
        sa.Column("site_id", sa.Integer(), nullable=True),
        sa.Column("requested_by_id", sa.Integer(), nullable=True),
        sa.Column("requester", sa.String(length=200), nullable=False),
        sa.Column("requested_at", ehs_core.db.UTCDateTime(timezone=True), nullable=False),
        sa.Column("created_at", ehs_core.db.UTCDateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["organization_id"], ["organizations.id"],
                                name=op.f("fk_calosha_log_requests_organization_id_organizations")),
        sa.ForeignKeyConstraint(["requested_by_id"], ["users.id"],
                                name=op.f("fk_calosha_log_requests_requested_by_id_users")),
        sa.ForeignKeyConstraint(["site_id"], ["sites.id"], name=op.f("fk_calosha_log_requests_site_id_sites")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_calosha_log_requests")),
    )


def downgrade() -> None:
    op.drop_table("calosha_log_requests")
    op.drop_table("calosha_violent_incidents")
    op.drop_table("calosha_serious_facts")
