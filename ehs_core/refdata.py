"""Reference data: what most pages show and what changes rarely, kept in each
worker process's memory between requests without ever being shown stale.

The sites and their areas (every picker and filter, every time shown in a
site's zone), the people's names (beside every comment and history entry)
and the people who can be assigned were read again on every page: three
statements of the incident page's seventeen. They change when an admin edits
a site, an area or a user, a few times a month.

The rule that keeps a cache honest across workers: the organization row
holds `reference_version`, read by the identity statement with the session
(`ehs_core.auth.sessions.IDENTITY`: no extra round trip). A flush that adds,
changes or deletes a tracked model (`config.track_reference_model`) bumps
the version in the same transaction. After the commit, the next request in
every worker reads the new version with its identity and loads the data
again; a worker never serves a value read before a change it has seen the
version of. (A value read after a commit but cached under the older version
is newer than its key, never older, and is replaced on the next request.)

Callers without a signed-in identity (kiosk links, jobs) have no version to
key by: they load the data every time. A cached value is shared by every
request of the worker: callers read it and never change it.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any, TypeVar

from pyramid.config import Configurator
from pyramid.request import Request
from sqlalchemy import event, inspect, update
from sqlalchemy.orm import Session

from ehs_core import caches
from ehs_core.security import identity_of
from ehs_core.users.models import Organization

T = TypeVar("T")

# Model class -> the attributes whose change matters (None: any change).
# Process-wide, as the mapped classes are.
TRACKED: dict[type, frozenset[str] | None] = {}
# A worker's values, by (organization, key): (version, value) (`ehs_core.caches`).
CACHE_NAME = "reference data"
# Bound on the kept values (per-user keys, such as saved views, add one each).
MAX_VALUES = 2048


def track(model: type, attributes: tuple[str, ...] | None = None) -> None:
    """A change to `model` (to one of `attributes` when given) outdates the
    organization's reference data."""
    TRACKED[model] = frozenset(attributes) if attributes is not None else None


def track_reference_model(config: Configurator, model: type,
                          attributes: tuple[str, ...] | None = None) -> None:
    """Directive: rows of `model` feed data a plugin caches with `cached`;
    their changes must reach every worker on its next request."""
    track(model, attributes)


def reference_version(request: Request) -> int | None:
    identity = identity_of(request)
    return getattr(identity, "reference_version", None) if identity is not None else None


def cached(request: Request, key: Hashable, load: Callable[[Request], T]) -> T:
    """`load(request)`, kept in this worker until the organization's
    reference data changes."""
    version = reference_version(request)
    if version is None or request.reference_data_changed:
        # (A request that changed reference data reads its own changes.)
        return load(request)
    store = caches.named(request.registry, CACHE_NAME, MAX_VALUES)
    full_key = (identity_of(request).account.organization_id, key)
    hit = store.get(full_key)
    if hit is not None and hit[0] == version:
        return hit[1]
    value = load(request)
    store[full_key] = (version, value)
    return value


def _outdates(session: Session, instance: Any) -> bool:
    attributes = TRACKED.get(type(instance), False)
    if attributes is False:
        return False
    if attributes is None:
        return session.is_modified(instance, include_collections=False)
    state = inspect(instance)
    return any(state.attrs[name].history.has_changes() for name in attributes)


@event.listens_for(Session, "before_flush")
def _bump_version(session: Session, _flush_context: Any, _instances: Any) -> None:
    """Bump the version when this flush writes a tracked row (see the module
    docstring); one statement, in the flush's own transaction."""
    if not TRACKED:
        return
    changed = (any(type(obj) in TRACKED for obj in session.new)
               or any(type(obj) in TRACKED for obj in session.deleted)
               or any(_outdates(session, obj) for obj in session.dirty))
    if not changed:
        return
    if (request := session.info.get("request")) is not None:
        request.reference_data_changed = True
    if not session.info.get("ehs.refdata.bumped"):
        # Once per transaction is enough: the version differs from the one
        # any worker has cached under once this transaction commits.
        session.connection().execute(
            update(Organization.__table__).values(reference_version=Organization.reference_version + 1))
        session.info["ehs.refdata.bumped"] = True


@event.listens_for(Session, "after_commit")
@event.listens_for(Session, "after_rollback")
def _forget_bump(session: Session) -> None:
    session.info.pop("ehs.refdata.bumped", None)


def forget(registry: Any) -> None:
    """Drop this worker's values (the test kit does, as it rolls back the
    versions a test committed: a number used again must not find them)."""
    caches.forget(registry, CACHE_NAME)


def reference_data_changed(request: Request) -> bool:
    """`request.reference_data_changed` (reified): False until the request's
    session writes reference data (`_bump_version` sets it), after which
    `cached` loads afresh, so a request reads its own changes. A request
    attribute, new with each attempt pyramid_retry makes (the style guide:
    per-request state goes through Pyramid's request methods, never parked
    in request.environ)."""
    return False


def includeme(config: Configurator) -> None:
    config.add_request_method(reference_data_changed, "reference_data_changed", reify=True)
    config.add_directive("track_reference_model", track_reference_model)
