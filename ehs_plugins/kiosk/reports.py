"""Filing a report through a reporting link: the one operation behind the
JSON endpoint (`views.file_report`, what kiosk.js sends) and the link page's
plain form post (`views.report_post`, the page without JavaScript). Both
adapters only turn their input into the report schema's values and the
uploads; the rules (the link's site, a name or anonymity, the retry of a
clientId, the link's rate limit, the files, the follow-up code) live here
once (project rule: every rule lives once, in a service module)."""

from __future__ import annotations

import datetime as dt
import logging
from dataclasses import dataclass, field
from typing import Any

from pyramid.request import Request

from ehs_core.attachments.storage import Refused, save_upload
from ehs_core.auth import ratelimit
from ehs_core.errors import TooMany, invalid
from ehs_core.followup import services as followup
from ehs_core.incidents.filing import check_replay, file_incident, find_by_client_id
from ehs_core.incidents.models import Incident
from ehs_plugins.kiosk.models import KioskLink, KioskReport

log = logging.getLogger(__name__)

MAX_FILES = 5
REPORT_LIMIT = ratelimit.Limit("kiosk", 30, dt.timedelta(minutes=10))


@dataclass
class Filed:
    """What filing answered: `created` False for a retry of the same
    clientId (nothing new filed); `follow_up_code` only for a new report
    without a name, shown this once (the core keeps only its hash)."""

    incident: Incident
    created: bool
    failed: list[dict[str, str]] = field(default_factory=list)
    follow_up_code: str | None = None


def file_link_report(request: Request, link: KioskLink, data: dict[str, Any], uploads: list[Any]) -> Filed:
    """`data` as `report_schema` gives it; `uploads` the posted files (at
    most MAX_FILES, checked by the adapter that reads them). Raises a
    DomainError (Invalid, Conflict, Unprocessable, TooMany) on refusal."""
    if link.site_id is not None and data["siteId"] != link.site_id:
        raise invalid("siteId", "This link reports only on its own site")
    data = dict(data)
    reporter_name = data.pop("reporterName")
    data["anonymous"] = not reporter_name
    # A retry is answered before the rate limit: it files nothing new.
    existing = find_by_client_id(request.dbsession, link.organization_id, data.get("clientId"))
    if existing is not None:
        return replay(request, link, existing, data)
    wait = ratelimit.hit(request.dbsession, REPORT_LIMIT, str(link.id))
    if wait is not None:
        raise TooMany("Too many reports from this link; try again in a few minutes",
                      headers={"Retry-After": str(max(1, int(wait.total_seconds()) + 1))})
    incident, created = file_incident(request, data, link.organization_id, reporter_id=None,
                                      filer=f"kiosk:{link.id}")
    if not created:  # the same clientId arrived concurrently
        return replay(request, link, incident, data)
    request.dbsession.add(KioskReport(incident_id=incident.id, kiosk_id=link.id,
                                      reporter_name=reporter_name or None))
    failed = []
    for upload in uploads:
        try:
            save_upload(request, incident, upload, uploader_id=None)
        except Refused as exc:
            failed.append({"name": (upload.filename or "")[:200], "error": exc.message})
    log.info("kiosk link %s filed %s (%d file(s) refused)", link.id, incident.reference, len(failed))
    # A report without a name: the code to follow it up, shown this once
    # (the core keeps only its hash); a named report gets none.
    code = followup.issue_code(request, incident) if incident.anonymous else None
    return Filed(incident, True, failed, code)


def replay(request: Request, link: KioskLink, incident: Incident, data: dict[str, Any]) -> Filed:
    """A retried submission: the original report, but only to the link that
    filed it and only for the same report (`check_replay`)."""
    filed = request.dbsession.get(KioskReport, incident.id)
    check_replay(incident, data, filed_by_sender=filed is not None and filed.kiosk_id == link.id)
    return Filed(incident, False)


def filed_through(request: Request, link: KioskLink, client_id: str) -> Incident | None:
    """The report this link filed with this clientId (the thanks page's
    lookup: the link's token and the random clientId together)."""
    incident = find_by_client_id(request.dbsession, link.organization_id, client_id)
    if incident is None:
        return None
    filed = request.dbsession.get(KioskReport, incident.id)
    return incident if filed is not None and filed.kiosk_id == link.id else None
