"""home's injury-records card without reading every case of the year (issue #42 item 2)

- `osha_cases.incomplete`: a recordable case Form 301 or the ITA case
  file still needs fields of, set with the decision on every write
  (`cases.recalculate`, from `cases.missing_fields`), filled here for the
  existing cases by the same rule in SQL (BACKFILL), with a partial index:
  the card counts them and names five (it loaded every case of the year
  to check their fields in Python);
- `ix_osha_cases_severe_unreported`: the cases that may owe a direct
  report to OSHA and were not reported (home's "reports to OSHA due"): a
  partial index of the few, where the card read every case;
- `ix_osha_incidents_injured`: the organization's injuries and illnesses
  by date (id and number included), so the count of those of the year
  without a case reads the index alone (it walked every incident of the
  organization down the number index).

Revision ID: osha_0012
Revises: osha_0011
"""
import sqlalchemy as sa
from alembic import op

revision = 'osha_0012'
down_revision = 'osha_0011'
branch_labels = None
depends_on = None

# cases.missing_fields, as SQL (its REQUIRED_FIELDS, texts also when empty,
# the part of body in words or as a code (bodyparts.words); the case type; the date of death; the days of the outcome).
BACKFILL = """
UPDATE osha_cases SET incomplete = (recordable AND (
  job_title IS NULL OR job_title = '' OR employee_address IS NULL OR employee_address = ''
  OR date_of_birth IS NULL OR date_of_hire IS NULL OR sex IS NULL OR sex = ''
  OR time_started_work IS NULL OR time_started_work = '' OR activity_before IS NULL OR activity_before = ''
  OR what_happened IS NULL OR what_happened = '' OR nature_of_injury IS NULL OR nature_of_injury = ''
  OR ((body_part IS NULL OR body_part = '') AND body_part_code IS NULL)
  OR object_substance IS NULL OR object_substance = ''
  OR treated_in_emergency_room IS NULL OR effective_case_type IS NULL
  OR (died AND date_of_death IS NULL)
  OR (outcome = 'days_away' AND coalesce(days_away, 0) = 0)
  OR (outcome = 'restricted' AND coalesce(days_restricted, 0) = 0)))
"""
INJURED = "type IN ('injury', 'illness')"
SEVERE_UNREPORTED = ("reported_to_osha_at IS NULL AND (died IS true OR inpatient_hospitalization IS true "
                     "OR amputation IS true OR loss_of_eye IS true)")


def upgrade() -> None:
    with op.batch_alter_table('osha_cases') as batch:
        batch.add_column(sa.Column('incomplete', sa.Boolean(), nullable=False, server_default=sa.false()))
    op.execute(BACKFILL)
    op.create_index('ix_osha_cases_incomplete', 'osha_cases', ['incident_id'],
                    postgresql_where=sa.text('incomplete'), sqlite_where=sa.text('incomplete'))
    op.create_index('ix_osha_cases_severe_unreported', 'osha_cases', ['incident_id'],
                    postgresql_where=sa.text(SEVERE_UNREPORTED), sqlite_where=sa.text(SEVERE_UNREPORTED))
    op.create_index('ix_osha_incidents_injured', 'incidents', ['organization_id', 'occurred_at'],
                    postgresql_include=['id', 'number'], postgresql_where=sa.text(INJURED),
                    sqlite_where=sa.text(INJURED))


def downgrade() -> None:
    op.drop_index('ix_osha_incidents_injured', table_name='incidents')
    op.drop_index('ix_osha_cases_severe_unreported', table_name='osha_cases')
    op.drop_index('ix_osha_cases_incomplete', table_name='osha_cases')
    with op.batch_alter_table('osha_cases') as batch:
        batch.drop_column('incomplete')
