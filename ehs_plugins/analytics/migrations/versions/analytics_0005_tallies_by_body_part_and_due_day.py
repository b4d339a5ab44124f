"""tallies by part of the body, and actions by their due day

The analytics answer's `byBodyPart` was counted from the injury cases of the
period joined to the incidents for every caller, a join that grows with the
period's incidents. The tallies now keep it for callers who see every
incident (kind `body`, also per quarter and year; see models.Tally), and an
incident's counted state says its people's parts of the body (`bp`). The
actions are also kept per due day (`action.d`), so the actions due in any
period are whole tally rows: whole months from `action`, the days of its
first and last months from `action.d`. The states and tallies counted
before lack both, so they are counted again from the rows
(`rebuild.rebuild_all`, with the settings and injury-figures provider of
the application being migrated). Run without the application (plain
alembic), the tallies are marked incomplete (no analytics_tally_state
row): the statistics read the rows until
`python -m ehs_plugins.analytics.tallies CONFIG.ini` counts them again.

Revision ID: analytics_0005
Revises: analytics_0004
Create Date: 2026-11-28
"""
from alembic import op
import sqlalchemy as sa


revision = 'analytics_0005'
down_revision = 'analytics_0004'
branch_labels = None
depends_on = None


def upgrade() -> None:
    registry = op.get_context().config.attributes.get("registry")
    if registry is None:
        op.execute('DELETE FROM analytics_tally_state')
        return
    from sqlalchemy.orm import Session

    from ehs_plugins.analytics.rebuild import rebuild_all

    with Session(bind=op.get_bind(), join_transaction_mode="create_savepoint") as session:
        rebuild_all(session, registry)
        session.commit()


def downgrade() -> None:
    # Nothing to undo: the earlier code reads neither the `body` nor the
    # `action.d` tallies.
    pass
