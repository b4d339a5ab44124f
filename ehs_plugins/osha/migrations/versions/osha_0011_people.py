"""osha_cases.person_id: the injured person of the incident a case was started from

One case per injured person (29 CFR 1904.4, 1904.29: each injured or ill
employee is one case): unique. No foreign key to the core's incident_people
(the plugin's history does not wait for the core's): the plugin refuses to
remove a person whose case names them.

Revision ID: osha_0011
Revises: osha_0010
Create Date: 2026-11-28
"""
import sqlalchemy as sa
from alembic import op

revision = 'osha_0011'
down_revision = 'osha_0010'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('osha_cases', schema=None) as batch_op:
        batch_op.add_column(sa.Column('person_id', sa.Integer(), nullable=True))
        batch_op.create_unique_constraint(batch_op.f('uq_osha_cases_person_id'), ['person_id'])


def downgrade() -> None:
    with op.batch_alter_table('osha_cases', schema=None) as batch_op:
        batch_op.drop_constraint(batch_op.f('uq_osha_cases_person_id'), type_='unique')
        batch_op.drop_column('person_id')
