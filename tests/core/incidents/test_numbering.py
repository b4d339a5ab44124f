"""Setup does not reach into incident numbering: it announces the new
organization (OrganizationCreated) and the incidents package starts the
organization's counter, so its first report is INC-1."""

from __future__ import annotations

from sqlalchemy import select

from ehs_core.incidents.models import IncidentCounter
from tests.core.incidents import file_report, new_site


def test_setup_starts_the_organizations_numbering_through_its_event(admin, dbsession):
    org_id = admin.get("/api/auth/me").json["organization"]["id"]
    counter = dbsession.execute(select(IncidentCounter).where(
        IncidentCounter.organization_id == org_id)).scalar_one()
    assert counter.last_number == 0
    first = file_report(admin, new_site(admin)["id"])
    assert first["number"] == 1
