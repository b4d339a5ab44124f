"""An employee's request for a copy of the violent incident log: Labor Code
§6401.9(f)(3) gives them the log within 15 calendar days of the request,
an obligation of its own kind in the queue of what is owed."""

from __future__ import annotations

import datetime as dt
from typing import Any

from pyramid.request import Request

from ehs_core.db import utcnow
from ehs_core.errors import Invalid
from ehs_core.obligations import services as obligations
from ehs_core.sites.models import Site
from ehs_plugins.calosha.models import LogRequest

KIND = "calosha.log_copy"
DAYS = 15


def request_copy(request: Request, data: dict[str, Any]) -> tuple[LogRequest, Any]:
    """Record the request (by the caller, or for the employee a supervisor
    names, asked on paper) and open the obligation due 15 days later."""
    identity = request.identity
    organization = identity.account.organization_id
    site_id = data.get("siteId")
    if site_id is not None:
        site = request.dbsession.get(Site, site_id)
        if site is None or site.organization_id != organization:
            raise Invalid("siteId", "No such site")
    requested_at = data.get("requestedAt") or utcnow()
    requester = data.get("requester") or identity.account.name
    entry = LogRequest(organization_id=organization, site_id=site_id, requested_by_id=identity.user_id,
                       requester=requester, requested_at=requested_at, created_at=utcnow())
    request.dbsession.add(entry)
    request.dbsession.flush()
    owed = obligations.open_obligation(
        request, KIND, subject=f"calosha.log_request:{entry.id}", organization_id=organization,
        site_id=site_id, due_at=requested_at + dt.timedelta(days=DAYS),
        title=f"Copy of the violent incident log for {requester}")
    return entry, owed
