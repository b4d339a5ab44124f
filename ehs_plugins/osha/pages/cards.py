"""The OSHA plugin's cards on the home page, for safety managers: the 300A
posting period (February 1 to April 30, 1904.32(b)(6)), the ITA deadline
(March 2, 1904.41(c)), recordable cases still missing fields, direct
reports to OSHA still owed (1904.39) and copies of the records asked for
(1904.35(b)(2)); near March 2, who must file what (1904.41)."""

from __future__ import annotations

import datetime as dt
from typing import Any

from pyramid.config import Configurator
from pyramid.i18n import TranslationStringFactory
from pyramid.request import Request
from sqlalchemy import func, or_, select

from ehs_core.db import constant, utcnow
from ehs_core.incidents.models import Incident, IncidentType, reference
from ehs_core.sites.models import Site
from ehs_core.sites.zones import site_zone
from ehs_plugins.osha import access
from ehs_plugins.osha.cases import case_number, numbered, severe_deadline
from ehs_plugins.osha.coverage import coverage
from ehs_plugins.osha.deadlines import ita_due
from ehs_plugins.osha.log import load_months, year_bounds
from ehs_plugins.osha.models import InjuryCase
from ehs_plugins.osha.pages import ROOT, TEMPLATES
from ehs_plugins.osha.pages.records import organization_sites, record_year
from ehs_plugins.osha.recordability import COVERED
from ehs_plugins.osha.views import MANAGE

# The incidents that are an injury or an illness by their type: each should
# have a case (property damage and environmental events may, and are not asked).
INJURED = (IncidentType.injury.value, IncidentType.illness.value)


def posting(today: dt.date) -> dict[str, Any]:
    """Where today falls against the posting period of last year's 300A."""
    start, end = dt.date(today.year, 2, 1), dt.date(today.year, 4, 30)
    return {"year": today.year - 1, "start": start, "end": end, "now": start <= today <= end,
            "upcoming": today < start}


def ita_deadline(today: dt.date) -> dict[str, Any]:
    """March 2 of this year for last year's data, or next year's once passed."""
    due = ita_due(today.year - 1)
    if today > due:
        due = ita_due(today.year)
    return {"due": due, "year": due.year - 1, "days": (due - today).days}


def records_card(request: Request) -> dict[str, Any]:
    today = dt.date.today()
    org = request.identity.account.organization_id
    year = record_year(today)
    start, _ = year_bounds(year)
    base = (select(InjuryCase, Incident).join(Incident, Incident.id == InjuryCase.incident_id)
            .where(Incident.organization_id == org))
    # Recordable cases of the year missing fields (`InjuryCase.incomplete`,
    # set from `missing_fields` with each decision): the five oldest named,
    # always the same five, and all of them counted, in one statement (a
    # window count over the matches found first: OFFSET 0 keeps PostgreSQL
    # from walking the occurred index case by case for five, as if it did not
    # need them all). The condition is the column itself, as the partial
    # index `ix_osha_cases_incomplete` states it: PostgreSQL does not prove
    # `incomplete IS TRUE` implies it, and read every case instead.
    incomplete = (select(InjuryCase.id, InjuryCase.sequence, Incident.number, Incident.occurred_at)
                  .join(Incident, Incident.id == InjuryCase.incident_id)
                  .where(Incident.organization_id == org, Incident.occurred_at >= start,
                         InjuryCase.incomplete)
                  .offset(0).subquery())
    missing = request.dbsession.execute(
        select(incomplete.c.id, incomplete.c.sequence, incomplete.c.number, func.count().over())
        .order_by(incomplete.c.occurred_at, incomplete.c.id).limit(5)).all()
    missing_count = missing[0][3] if missing else 0
    # Direct reports still owed: a severe answer, not yet reported.
    severe = request.dbsession.execute(base.where(
        InjuryCase.reported_to_osha_at.is_(None), InjuryCase.work_related.is_not(False),
        InjuryCase.employment_type.in_([c.value for c in COVERED]),
        or_(InjuryCase.died.is_(True), InjuryCase.inpatient_hospitalization.is_(True),
            InjuryCase.amputation.is_(True), InjuryCase.loss_of_eye.is_(True)))).all()
    zones = {site.id: site.timezone for site in request.dbsession.execute(select(Site)).scalars()}
    due = []
    now = utcnow()
    for case, incident in severe:
        zone_name = zones.get(incident.site_id)
        deadline = severe_deadline(case, incident, site_zone(zone_name, request.registry))
        if deadline is not None:
            due.append({"case": case, "number": case_number(incident, case), "due": deadline.due,
                        "overdue": deadline.due < now, "zone": zone_name})
    due.sort(key=lambda item: item["due"])
    # Copies of the records asked for (1904.35(b)(2)), the soonest due first.
    requests = [{"requester": row.requester_name, "due": row.due_by, "overdue": row.due_by < now,
                 "zone": zones.get(row.site_id)} for row in access.open_requests(request)]
    # Injuries and illnesses of this year with no case yet (issue #36 item
    # 11): each may start a 1904.39 clock and must be decided within 7 days
    # (1904.29(b)(3)); the five newest shown and all counted, in one
    # statement, from `ix_osha_incidents_injured` (the year's injuries and
    # illnesses, index only). OFFSET 0 keeps the matches found first: a walk
    # down the number index for five read every incident of the organization
    # when none matched.
    found = (select(Incident.id, Incident.number).where(
        Incident.organization_id == org, Incident.type.in_([constant(kind) for kind in INJURED]),
        Incident.occurred_at >= start,
        ~select(InjuryCase.id).where(InjuryCase.incident_id == Incident.id).exists())
        .offset(0).subquery())
    uncased = request.dbsession.execute(select(found.c.number, func.count().over()).order_by(
        found.c.number.desc()).limit(5)).all()
    uncased_count = uncased[0][1] if uncased else 0
    return {"posting": posting(today), "ita": ita_deadline(today), "record_year": year,
            "uncased": [{"number": number, "reference": reference(number)} for number, _ in uncased],
            "uncased_count": uncased_count,
            "access": requests[:5], "access_count": len(requests),
            "missing": [{"case": {"id": case_id}, "number": numbered(number, sequence)}
                        for case_id, sequence, number, _ in missing], "missing_count": missing_count,
            "severe": due[:5], "severe_count": len(due)}


def establishments_described(request: Request) -> bool:
    """The first hour's step: every active site has what the 300A and the
    ITA file name an establishment by (1904.32(b)(3), 1904.41)."""
    missing = or_(Site.street_address.is_(None), Site.city.is_(None), Site.state.is_(None),
                  Site.zip.is_(None), Site.naics_code.is_(None))
    active = select(Site.id).where(Site.archived.is_(False)).limit(1)
    if request.dbsession.execute(active).first() is None:
        return False  # no site yet: nothing is described
    return request.dbsession.execute(active.where(missing)).first() is None


# The home page warns of the electronic submission this many days before 2 March.
ITA_WARNING_DAYS = 60


def ita_warning(today: dt.date) -> dict[str, Any] | None:
    """The coming 2 March (1904.41(c)) when it is at most `ITA_WARNING_DAYS` away, else None."""
    deadline = ita_deadline(today)
    return deadline if deadline["days"] <= ITA_WARNING_DAYS else None


def ita_card(request: Request) -> dict[str, Any] | None:
    """Near 2 March: which sites must file what for last year's records
    (`coverage`), else no card."""
    deadline = ita_warning(dt.date.today())
    if deadline is None:
        return None
    sites = organization_sites(request)
    due = [c for c in coverage(load_months(request.dbsession, request.registry, sites, deadline["year"]))
           if c["requires"]] if sites else []
    return {"ita": deadline, "sites": due}


_ = TranslationStringFactory("ehs_osha")
CLOSE_WITHOUT_CASE = _(
    "this ${kind} has no injury case. If someone was hurt or fell ill at work, add a case first: whether "
    "it is recordable must be decided within 7 days (1904.29(b)(3)). If no case is needed, say why in the "
    "note: it is kept with the incident.")
HURT = {IncidentType.injury.value: _("injury"), IncidentType.illness.value: _("illness")}


def close_without_case(request: Request, incident: Incident, target: str) -> str | None:
    """Closing an injury or illness with no injury case asks for a note
    (issue #36 item 11): the move stays allowed, as the spec's workflow
    fixes it; the warning is shown beside "Move to Closed"
    (`add_transition_warning`), held back or not. Asked only when closing
    is a move the person may make from here, so the incident page reads
    no case otherwise."""
    if target != "closed" or incident.type not in HURT:
        return None
    has_case = request.dbsession.execute(
        select(InjuryCase.id).where(InjuryCase.incident_id == incident.id).limit(1)).first()
    if has_case is not None:
        return None
    kind = request.localizer.translate(HURT[incident.type])
    return request.localizer.translate(_(CLOSE_WITHOUT_CASE, mapping={"kind": kind}))


def includeme(config: Configurator) -> None:
    config.add_transition_warning("osha.close_without_case", close_without_case)
    config.add_dashboard_card("osha_ita", TEMPLATES + "ita_card.html", ita_card, permission=MANAGE,
                              context=ROOT, order=41)
    config.add_dashboard_card("osha_records", TEMPLATES + "card.html", records_card, permission=MANAGE,
                              context=ROOT, order=40)
    config.add_first_step("osha_establishments",
                          "Enter each site's establishment details for the injury records", "page.sites",
                          establishments_described, order=30)
