"""The seeded organization, its users of every role, its sites and their
area trees."""

from __future__ import annotations

import datetime as dt
import random

from sqlalchemy import select
from sqlalchemy.orm import Session

from ehs_core.incidents.models import IncidentCounter
from ehs_core.security import Role
from ehs_core.seed.bulk import bulk_insert
from ehs_core.seed.vocabulary import AREAS, BUILDINGS, INDUSTRIES, SITE_PLACES, person_name
from ehs_core.sites.models import Area, AreaKind, Site
from ehs_core.users.models import Organization, User

EMAIL_DOMAIN = "seed.example"


def ensure_organization(session: Session) -> int:
    org = session.execute(select(Organization).order_by(Organization.id)).scalar()
    if org is None:
        org = Organization(name="Seeded Manufacturing Co.")
        session.add(org)
        session.flush()
    if session.get(IncidentCounter, org.id) is None:
        session.add(IncidentCounter(organization_id=org.id, last_number=0))
        session.flush()
    return org.id


def user_counts(incidents: int) -> dict[str, int]:
    return {Role.admin: 2, Role.safety_manager: max(2, incidents // 10_000),
            Role.supervisor: max(3, incidents // 2_000), Role.reporter: max(6, incidents // 400)}


def seed_users(session: Session, rng: random.Random, organization_id: int, incidents: int,
               password_hash: str | None) -> dict[str, list[int]]:
    """`{role}{n}@seed.example` for each role; users already there are reused."""
    existing = dict(session.execute(select(User.email, User.id)).all())
    now = dt.datetime.now(dt.UTC)
    rows, emails = [], []
    for role, count in user_counts(incidents).items():
        for n in range(1, count + 1):
            email = f"{role.value.replace('_', '')}{n}@{EMAIL_DOMAIN}"
            emails.append((role, email))
            if email not in existing:
                # One reporter has left: inactive users exist in real data too.
                active = not (role == Role.reporter and n == count)
                rows.append({"organization_id": organization_id, "name": person_name(rng), "email": email,
                             "role": role.value, "active": active, "password_hash": password_hash,
                             "created_at": now})
    for email, user_id in zip([r["email"] for r in rows],
                              bulk_insert(session, User, rows, ids=True), strict=True):
        existing[email] = user_id
    by_role: dict[str, list[int]] = {role.value: [] for role in Role}
    inactive = {r["email"] for r in rows if not r["active"]}
    for role, email in emails:
        if email not in inactive:
            by_role[role.value].append(existing[email])
    return by_role


def seed_sites(session: Session, rng: random.Random, organization_id: int, count: int) -> list[Site]:
    taken = set(session.execute(select(Site.name)).scalars())
    sites = []
    for n in range(count):
        name, street, city, state, zip_code, zone = SITE_PLACES[n % len(SITE_PLACES)]
        if n >= len(SITE_PLACES):
            name = f"{name} {n // len(SITE_PLACES) + 1}"
        while name in taken:
            name += " (seed)"
        taken.add(name)
        naics, industry = rng.choice(INDUSTRIES)
        site = Site(organization_id=organization_id, name=name,
                    address=f"{street}, {city}, {state} {zip_code}", timezone=zone, archived=False,
                    street_address=street, city=city, state=state,
                    zip=zip_code, naics_code=naics, industry_description=industry,
                    ein=f"{rng.randrange(10**8, 10**9)}", establishment_type=1)
        session.add(site)
        sites.append(site)
    session.flush()
    for site in sites:
        buildings = []
        for building in rng.sample(BUILDINGS, 2 + rng.randrange(2)):
            area = Area(site_id=site.id, name=building, kind=AreaKind.building, archived=False)
            session.add(area)
            buildings.append(area)
        session.flush()
        for building in buildings:
            for name, kind in rng.sample(AREAS, 3):
                session.add(Area(site_id=site.id, parent_id=building.id, name=name, kind=kind,
                                 archived=False))
    # An archived area, as sites change over the years.
    if sites:
        session.add(Area(site_id=sites[0].id, name="Old Canteen", kind=AreaKind.other, archived=True))
    session.flush()
    return sites
