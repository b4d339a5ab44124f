from __future__ import annotations

import datetime as dt
from enum import StrEnum

from sqlalchemy import Boolean, ForeignKey, Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from ehs_core.db import Base, UTCDateTime, utcnow


class AreaKind(StrEnum):
    building = "building"
    area = "area"
    line = "line"
    other = "other"


# Establishment fields of a site, as the recordkeeping plugin needs them
# (OSHA 300A / ITA summary): JSON name -> column attribute.
ESTABLISHMENT_FIELDS = {
    "streetAddress": "street_address",
    "city": "city",
    "state": "state",
    "zip": "zip",
    "naicsCode": "naics_code",
    "industryDescription": "industry_description",
    "ein": "ein",
    "establishmentType": "establishment_type",
}


class Site(Base):
    __tablename__ = "sites"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    organization_id: Mapped[int] = mapped_column(ForeignKey("organizations.id"), index=True)
    name: Mapped[str] = mapped_column(String(200))
    address: Mapped[str | None] = mapped_column(String(500), nullable=True)
    timezone: Mapped[str | None] = mapped_column(String(64), nullable=True)
    archived: Mapped[bool] = mapped_column(Boolean, default=False)
    street_address: Mapped[str | None] = mapped_column(String(200), nullable=True)
    city: Mapped[str | None] = mapped_column(String(100), nullable=True)
    state: Mapped[str | None] = mapped_column(String(2), nullable=True)
    zip: Mapped[str | None] = mapped_column(String(9), nullable=True)
    naics_code: Mapped[str | None] = mapped_column(String(6), nullable=True)
    industry_description: Mapped[str | None] = mapped_column(String(300), nullable=True)
    ein: Mapped[str | None] = mapped_column(String(9), nullable=True)
    # OSHA ITA code: 1 not a government entity, 2 state, 3 local government.
    establishment_type: Mapped[int | None] = mapped_column(Integer, nullable=True)
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)


class Area(Base):
    __tablename__ = "areas"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    site_id: Mapped[int] = mapped_column(ForeignKey("sites.id"), index=True)
    parent_id: Mapped[int | None] = mapped_column(ForeignKey("areas.id"), nullable=True)
    name: Mapped[str] = mapped_column(String(200))
    kind: Mapped[str] = mapped_column(String(20), default=AreaKind.area)
    archived: Mapped[bool] = mapped_column(Boolean, default=False)
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)
