"""Title 8 CCR §342(a): the report to Cal/OSHA of a serious injury or
illness, or a death, of an employee at a California place of employment,
"immediately", which §342(a) defines as as soon as practically possible and
no longer than 8 hours after the employer knows or with diligent inquiry
would have known of it.

Serious (Labor Code §6302(h), as §342 reads it): in-patient hospitalization
for more than 24 hours for other than medical observation, the loss of any
member of the body, or any serious degree of permanent disfigurement. The
federal report of 29 CFR 1904.39 (in-patient admission of any length,
amputation or loss of an eye within 24 hours; a death within 8) does not
replace it: the triggers and the clocks differ, and each is owed on its own.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

from pyramid.request import Request
from sqlalchemy import select

from ehs_core.db import utcnow
from ehs_core.obligations import services as obligations
from ehs_core.sites.models import Site
from ehs_plugins.calosha.models import SeriousFacts

KIND = "calosha.serious_report"
REPORT_HOURS = 8
HOSPITAL_HOURS = 24  # more than this, for other than observation

# What the district office asks to be told in a §342 report (Cal/OSHA's
# list; check it against the current text of §342 before relying on it).
TELL = (
    "Time and date of the accident",
    "Employer's name, address and telephone number",
    "Name and job title of the person reporting the accident",
    "Address of the site of the accident or event",
    "Name of the person to contact at the site",
    "Name and address of the injured employee(s)",
    "Nature of the injury",
    "Location where the injured employee(s) was (were) moved to",
    "List and identity of other law enforcement agencies present at the site",
    "Description of the accident and whether the scene or instrumentality has been altered",
)


@dataclass(frozen=True)
class Facts:
    died: bool = False
    inpatient_hours: int | None = None
    observation_only: bool = False
    lost_member: bool = False
    disfigurement: bool = False


def reasons(facts: Facts | SeriousFacts) -> list[str]:
    """Why the injury is serious under §342(a) (none: no report owed)."""
    found = []
    if facts.died:
        found.append("death")
    if (facts.inpatient_hours or 0) > HOSPITAL_HOURS and not facts.observation_only:
        found.append("in-patient hospitalization over 24 hours")
    if facts.lost_member:
        found.append("loss of a member of the body")
    if facts.disfigurement:
        found.append("serious permanent disfigurement")
    return found


def due_by(facts: Facts | SeriousFacts, learned_at: dt.datetime) -> dt.datetime | None:
    """When the report is due: 8 hours after the employer learned, if owed."""
    return learned_at + dt.timedelta(hours=REPORT_HOURS) if reasons(facts) else None


def in_california(request: Request, site_id: int) -> bool:
    state = request.dbsession.execute(select(Site.state).where(Site.id == site_id)).scalar()
    return (state or "").strip().upper() == "CA"


def subject(incident_id: int) -> str:
    return obligations.incident_subject(incident_id)


def sync_obligation(request: Request, incident: Any, facts: SeriousFacts) -> None:
    """Open the report when the facts owe it at a California site (due 8
    hours after the employer learned); close an open one as waived when
    corrected facts no longer owe it."""
    why = reasons(facts)
    if why and in_california(request, incident.site_id):
        obligations.open_obligation(request, KIND, subject=subject(incident.id), incident=incident,
                                    due_at=facts.learned_at + dt.timedelta(hours=REPORT_HOURS))
    else:
        obligations.withdraw(request, KIND, subject(incident.id), incident.organization_id,
                             "The facts entered no longer make it a serious injury at a California site.")


def facts_of(request: Request, incident_id: int) -> SeriousFacts | None:
    return request.dbsession.execute(
        select(SeriousFacts).where(SeriousFacts.incident_id == incident_id)).scalar()


def put_facts(request: Request, incident: Any, data: dict[str, Any]) -> SeriousFacts:
    """Record the facts (all of them, as given) and open, move or withdraw
    the report they owe. The employer learned when the incident was
    reported unless `learnedAt` says otherwise."""
    facts = facts_of(request, incident.id)
    if facts is None:
        facts = SeriousFacts(incident_id=incident.id)
        request.dbsession.add(facts)
    facts.died = data["died"]
    facts.inpatient_hours = data["inpatientHours"]
    facts.observation_only = data["observationOnly"]
    facts.lost_member = data["lostMember"]
    facts.disfigurement = data["disfigurement"]
    facts.learned_at = data["learnedAt"] or incident.created_at
    facts.updated_at = utcnow()
    facts.updated_by_id = request.identity.user_id
    request.dbsession.flush()
    sync_obligation(request, incident, facts)
    return facts


def facts_json(request: Request, incident: Any, facts: SeriousFacts, zone: dt.tzinfo) -> dict[str, Any]:
    """The facts, and `report` when §342(a) owes Cal/OSHA a report: why,
    by when (8 hours after the employer learned, on the site's clock), its
    status in the queue and what the district office asks to be told."""
    body: dict[str, Any] = {
        "died": facts.died, "inpatientHours": facts.inpatient_hours,
        "observationOnly": facts.observation_only,
        "lostMember": facts.lost_member, "disfigurement": facts.disfigurement,
        "learnedAt": facts.learned_at.astimezone(zone).isoformat(), "report": None}
    why = reasons(facts)
    owed = obligations.find(request, KIND, subject(incident.id), incident.organization_id)
    if why and owed is not None:
        body["report"] = {"withinHours": REPORT_HOURS, "reasons": why,
                          "dueBy": owed.due_at.astimezone(zone).isoformat(), "status": owed.status,
                          "obligationId": owed.id, "tell": list(TELL)}
    return body
