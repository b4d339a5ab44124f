"""What `ehs seed` is asked for, and what each seeder is handed: the
options, the open session and random source, and the incidents the core
wrote (`add_seeder`, docs/plugins.md)."""

from __future__ import annotations

import datetime as dt
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from pyramid.registry import Registry
from sqlalchemy.orm import Session

from ehs_core.seed.bulk import BATCH, bulk_insert
from ehs_core.sites.models import Site


class SeedError(Exception):
    """The database cannot be seeded as asked (e.g. it already has incidents)."""


@dataclass(frozen=True)
class SeedOptions:
    incidents: int
    years: float = 3
    sites: int = 5
    seed: int = 1
    password: str | None = None
    force: bool = False
    batch: int = BATCH


@dataclass(slots=True)
class SeededIncident:
    """What seeders get to know about each incident written."""

    id: int
    number: int
    type: str
    severity: str
    status: str
    occurred_at: dt.datetime
    offset_minutes: int
    created_at: dt.datetime
    site_id: int
    area_id: int | None
    title: str


@dataclass
class SeedContext:
    """Handed to each seeder: the open session (one transaction), the random
    source, the moment the data ends, and what the core wrote."""

    session: Session
    registry: Registry
    rng: random.Random
    options: SeedOptions
    now: dt.datetime
    start: dt.datetime
    organization_id: int
    sites: list[Site]
    users: dict[str, list[int]]
    incidents: list[SeededIncident] = field(default_factory=list)

    def insert(self, model: type, rows: Sequence[dict[str, Any]], ids: bool = False,
               copy: bool = True) -> list[int]:
        """Bulk write in batches; with `ids`, each row first gets a primary
        key reserved for it, and the keys are returned in row order. On
        PostgreSQL the batches go out by COPY (see `bulk_insert`): seeders
        get it without asking."""
        return bulk_insert(self.session, model, rows, self.options.batch, ids, copy)


Seeder = Callable[[SeedContext], dict[str, int] | None]
