"""Injury and illness recordkeeping (29 CFR Part 1904): cases, the 300 Log
and 300A, Form 301, hours, rates and the ITA electronic-submission files.
Every endpoint needs safety_manager; everyone who may see an incident sees
only how many people were hurt (`injuredCount`)."""

import datetime as dt
from typing import Any

from pyramid.config import Configurator

ROOT = "ehs_plugins.osha.views.OshaRoot"


def includeme(config: Configurator) -> None:
    from ehs_plugins.osha.services import osha_case_counts, osha_cases_read
    from ehs_plugins.osha.views import injured_count, injured_count_column

    config.add_request_method(osha_cases_read, "osha_cases_read", reify=True)
    config.add_request_method(osha_case_counts, "osha_case_counts", reify=True)
    config.add_migrations("osha", "ehs_plugins.osha:migrations/versions")
    config.add_incident_section("injuredCount", column=injured_count_column, decode=injured_count,
                                fresh=lambda: 0)
    config.add_mail_template("osha_severe_report", "ehs_plugins.osha:templates/severe_report.txt")
    # Case decisions go to the incident's audit trail, readable by safety managers only.
    config.add_restricted_audit_action("osha.case_decision", "ehs_plugins.osha.trail.may_see_decisions")
    incident = r"/api/osha/incidents/{number:\d{1,9}}"
    config.add_route("osha.incident_cases", incident + "/cases", factory=ROOT)
    config.add_route("osha.case", r"/api/osha/cases/{id:\d{1,9}}", factory=ROOT)
    config.add_route("osha.case_301", r"/api/osha/cases/{id:\d{1,9}}/301", factory=ROOT)
    config.add_route("osha.log", "/api/osha/log", factory=ROOT)
    config.add_route("osha.site_hours", r"/api/osha/sites/{id:\d{1,9}}/hours", factory=ROOT)
    config.add_route("osha.certification", r"/api/osha/sites/{id:\d{1,9}}/certification", factory=ROOT)
    config.add_route("osha.ita_summary", "/api/osha/ita/summary.csv", factory=ROOT)
    config.add_route("osha.ita_cases", "/api/osha/ita/cases.csv", factory=ROOT)
    config.add_route("osha.ita_coverage", "/api/osha/ita/coverage", factory=ROOT)
    config.add_route("osha.ita_submissions", "/api/osha/ita/submissions", factory=ROOT)
    config.add_route("osha.ita_submission", r"/api/osha/ita/submissions/{id:\d{1,9}}", factory=ROOT)
    config.add_route("osha.access_requests", "/api/osha/access-requests", factory=ROOT)
    config.add_route("osha.access_request_fulfil", r"/api/osha/access-requests/{id:\d{1,9}}/fulfil",
                     factory=ROOT)
    config.scan(".views")
    config.scan(".reports")
    config.scan(".access_views")
    # Filing with OSHA's ITA API (filing.py): where, and the employer's token.
    from ehs_plugins.osha.filing import JOB, PREVIEW_URL, TOKEN, URL, run

    config.add_setting(URL, "EHS_OSHA_ITA_URL", web_address, "https://www.osha.gov/oshaApi/v1")
    config.add_setting(PREVIEW_URL, "EHS_OSHA_ITA_PREVIEW_URL", web_address, "https://preview.osha.gov/oshaApi/v1")
    config.add_setting(TOKEN, "EHS_OSHA_ITA_TOKEN", str.strip, "")
    config.add_job(JOB, run)
    config.scan(".listeners")
    # Its direct reports (1904.39) in the core's queue of what is owed to regulators.
    config.add_obligation_kind(
        "osha.severe_report", title="OSHA severe injury report (29 CFR 1904.39)", handled_by="safety_manager",
        fulfilled_by="By phone or in person to the OSHA area office, at 1-800-321-6742, or online; not by "
                     "e-mail, fax or voicemail")
    config.add_obligation_kind(
        "osha.access_request", title="Copy of the injury records for an employee (29 CFR 1904.35(b)(2))",
        handled_by="safety_manager",
        fulfilled_by="Give the copy at the access desk (Records, access requests): by the end of the next "
                     "business day, or within 7 calendar days for a representative's Forms 301")
    config.add_obligation_kind(
        "osha.ita_filing", title="Electronic submission to OSHA's ITA (29 CFR 1904.41)",
        handled_by="safety_manager",
        fulfilled_by="File the site-year with OSHA's Injury Tracking Application (Records, ITA submission, "
                     "not a dry run) by March 2",
        remind_before=dt.timedelta(days=14))
    from huey import crontab

    from ehs_plugins.osha.obligations import ITA_JOB, keep_ita_filings

    # Daily: the filing date is a date (1904.41(c)); the job is idempotent.
    config.add_periodic_job(ITA_JOB, keep_ita_filings, crontab(minute="7", hour="6"))
    config.scan(".obligations")
    config.include(".pages")
    config.add_translation_dirs("ehs_plugins.osha:locale")
    # Recordable cases and rates for the analytics plugin, through the
    # directive it owns. Plugins are included in the order the setting lists
    # them, so the offer is made once all are in: at commit.
    config.action(None, lambda: offer_injury_figures(config))
    # `ehs seed`: injury cases on seeded injuries and illnesses, monthly hours.
    config.add_seeder("osha", seed)


def web_address(text: str) -> str:
    """A setting that is an http(s) address."""
    value = text.strip()
    if not value.startswith(("https://", "http://")):
        raise ValueError("an address starting with https://")
    return value


def offer_injury_figures(config: Configurator) -> None:
    from ehs_plugins.osha.bodyparts import coded_cases, titles
    from ehs_plugins.osha.events import CaseChanged
    from ehs_plugins.osha.rates import rates, recordable_cases

    directive = getattr(config, "add_injury_figures", None)
    if directive is None:
        return  # the analytics plugin is not enabled
    directive(cases=recordable_cases, rates=rates, changed_by=(CaseChanged,),
              body_parts=coded_cases, body_part_titles=titles)


def seed(ctx: Any) -> dict[str, int]:
    """Seeder for `ehs seed` (see ehs_core.seed): one case per injured or ill
    person on the seeded injury and illness incidents, classified by the same
    `recalculate` as the API, and monthly hours and employees of each site."""
    import datetime as dt
    from decimal import Decimal

    from sqlalchemy import select

    from ehs_plugins.osha.cases import recalculate
    from ehs_plugins.osha.models import InjuryCase, SiteHours

    rng = ctx.rng
    columns = [c.key for c in InjuryCase.__table__.columns if c.key != "id"]
    jobs = ("Machine operator", "Forklift driver", "Assembler", "Maintenance technician",
            "Warehouse associate", "Welder", "Packer", "Lab technician")
    natures = ("Laceration", "Strain", "Contusion", "Fracture", "Burn", "Dermatitis", "Sprain")
    # The words on the forms and their OIICS 2.01 part-of-body code (`bodyparts`).
    parts = (("Left hand", "44"), ("Right hand", "44"), ("Lower back", "32"), ("Right eye", "12"),
             ("Left knee", "52"), ("Shoulder", "41"), ("Forearm", "42"))
    objects = ("Box cutter", "Pallet", "Press tooling", "Wet floor", "Solvent", "Hot pipe", "Metal sheet")
    illnesses = ("skin_disorder", "respiratory_condition", "poisoning", "hearing_loss", "other_illness")
    cases = []
    for incident in ctx.incidents:
        if incident.type not in ("injury", "illness"):
            continue
        people = 1 if rng.random() < 0.88 else rng.choice((2, 2, 3))
        for sequence in range(1, people + 1):
            outcome = rng.choices(("first_aid", "medical", "restricted", "days_away", "death"),
                                  (30, 30, 19, 20, 0.3 if incident.severity == "critical" else 0.01))[0]
            days_away = rng.randrange(1, 60) if outcome == "days_away" else 0
            days_restricted = rng.randrange(1, 30) if outcome == "restricted" or rng.random() < 0.1 else 0
            severe = incident.severity in ("high", "critical")
            local = incident.occurred_at + dt.timedelta(minutes=incident.offset_minutes)
            born = dt.date(rng.randrange(1960, 2004), rng.randrange(1, 13), rng.randrange(1, 29))
            complete = rng.random() < 0.9  # some Form 301 data still missing
            case = InjuryCase(
                incident_id=incident.id, sequence=sequence,
                name=f"{rng.choice(('Alex', 'Jordan', 'Maria', 'Chen', 'Aisha', 'Pat'))} "
                     f"{rng.choice(('Reed', 'Novak', 'Santos', 'Li', 'Khan', 'Byrne'))}",
                employment_type=rng.choices(("employee", "temporary_worker", "contractor"), (90, 7, 3))[0],
                work_related=rng.random() < 0.97, new_case=rng.random() < 0.98,
                died=outcome == "death", date_of_death=local.date() if outcome == "death" else None,
                days_away_from_work=outcome == "days_away", days_away=days_away,
                restricted_or_transfer=days_restricted > 0, days_restricted=days_restricted,
                medical_treatment=outcome != "first_aid", loss_of_consciousness=rng.random() < 0.01,
                significant_diagnosis=rng.random() < 0.02,
                special_case=rng.choices(("none", "needlestick", "hearing_loss"), (97, 2, 1))[0],
                case_type="injury" if incident.type == "injury" else rng.choice(illnesses),
                privacy_case=rng.random() < 0.03,
                inpatient_hospitalization=severe and rng.random() < 0.1,
                amputation=severe and rng.random() < 0.02, loss_of_eye=False,
                reported_to_osha_at=None,
                job_title=rng.choice(jobs), nature_of_injury=rng.choice(natures),
                # Drawn where the words alone were, so a seed gives the same cases.
                body_part=(part := rng.choice(parts))[0], body_part_code=part[1],
                object_substance=rng.choice(objects) if complete else None,
                activity_before="Routine work at the station", what_happened=incident.title,
                date_of_birth=born, date_of_hire=dt.date(rng.randrange(2005, local.year + 1), 1, 15)
                if complete else None, sex=rng.choice("MF"),
                employee_address="1 Main St, Springfield" if complete else None,
                physician_name="Dr. Rivera", treatment_facility="City Occupational Health",
                treated_in_emergency_room=rng.random() < 0.15, time_started_work="07:00", time_unknown=False,
                created_at=incident.created_at + dt.timedelta(hours=rng.uniform(1, 48)),
            )
            case.created_at = min(case.created_at, ctx.now)
            case.updated_at = case.created_at
            if case.inpatient_hospitalization or case.amputation or case.died:
                case.reported_to_osha_at = min(incident.occurred_at + dt.timedelta(hours=6), ctx.now)
                case.severe_notice_sent_at = case.created_at
            recalculate(case)
            cases.append({key: getattr(case, key) for key in columns})
    ctx.insert(InjuryCase, cases)

    taken = set(ctx.session.execute(select(SiteHours.site_id, SiteHours.year, SiteHours.month)).all())
    hours = []
    last = ctx.now.date().replace(day=1) - dt.timedelta(days=1)  # the last complete month
    for site in ctx.sites:
        employees = rng.uniform(60, 600)
        year, month = ctx.start.year, ctx.start.month
        while (year, month) <= (last.year, last.month):
            if (site.id, year, month) not in taken:
                average = Decimal(str(round(employees * rng.uniform(0.95, 1.05), 2)))
                worked = Decimal(str(round(float(average) * rng.uniform(150, 175), 2)))
                hours.append({"site_id": site.id, "year": year, "month": month, "hours": worked,
                              "average_employees": average})
            year, month = (year + 1, 1) if month == 12 else (year, month + 1)
    ctx.insert(SiteHours, hours)
    return {"osha_cases": len(cases), "osha_site_hours": len(hours)}
