"""The 300A certification of a site and year (29 CFR 1904.32(b)(3)-(4)): a
company executive certifies that they examined the log and that the summary
is correct; the form posted from February 1 to April 30 shows their name,
title, telephone and the date (1904.32(b)(5), (b)(6))."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from ehs_core.db import utcnow
from ehs_core.sites.models import Site
from ehs_plugins.osha.models import Certification

FIELDS = {"executiveName": "executive_name", "executiveTitle": "executive_title", "phone": "phone",
          "certifiedOn": "certified_on"}


def certification_of(dbsession: Session, site: Site, year: int) -> Certification | None:
    return dbsession.execute(select(Certification).where(
        Certification.site_id == site.id, Certification.year == year)).scalar()


def certification_json(row: Certification | None) -> dict[str, Any]:
    """Always the four fields (null until entered) and whether all are in."""
    values = {name: getattr(row, column) if row is not None else None for name, column in FIELDS.items()}
    if values["certifiedOn"] is not None:
        values["certifiedOn"] = values["certifiedOn"].isoformat()
    return {**values, "complete": all(v not in (None, "") for v in values.values())}


def missing_certification(row: Certification | None) -> list[str]:
    return [name for name, column in FIELDS.items()
            if row is None or getattr(row, column) in (None, "")]


def certify(dbsession: Session, site: Site, year: int, data: dict[str, Any]) -> Certification:
    """Set the certification of a site and year (validated `CertificationBody`)."""
    row = certification_of(dbsession, site, year)
    if row is None:
        row = Certification(site_id=site.id, year=year)
        dbsession.add(row)
    for name, column in FIELDS.items():
        setattr(row, column, data.get(name))
    row.updated_at = utcnow()
    dbsession.flush()
    return row
