"""Where attachment bytes live: one interface, three stores.

`ehs.storage` (EHS_STORAGE) names the store, checked at start-up by
`ehs_core.settings`:

- ``local`` — files under `ehs.upload_dir` on this host (the default; one
  host only, or a shared file system mounted on every host);
- ``database`` — chunks in the service's own database (PostgreSQL in a
  deployment of several hosts: the one store they already share);
- ``s3://bucket/prefix`` — any S3-compatible object store, reached with
  boto3; credentials and the endpoint come from the standard AWS_*
  environment variables (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY,
  AWS_ENDPOINT_URL, AWS_DEFAULT_REGION), never from the ini file.

Every backend streams: bytes move in chunks of `CHUNK_SIZE`, so no file is
ever held whole in memory. Which transaction hooks keep a store free of
orphans is decided by `ehs_core.attachments.storage` from `transactional`.
"""

from __future__ import annotations

from typing import Any

from ehs_core.attachments.backends.base import CHUNK_SIZE, Backend, Missing

__all__ = ["CHUNK_SIZE", "Backend", "Missing", "make_backend"]


def make_backend(spec: str, registry: Any) -> Backend:
    """The backend a parsed `ehs.storage` value names."""
    if spec == "local":
        from ehs_core.attachments.backends.local import LocalBackend

        return LocalBackend(registry.settings["ehs.upload_dir"])
    if spec == "database":
        from ehs_core.attachments.backends.database import DatabaseBackend

        return DatabaseBackend(registry)
    if spec.startswith("s3://"):
        from ehs_core.attachments.backends.s3 import S3Backend

        return S3Backend.from_url(spec)
    raise ValueError(f"unknown storage {spec!r}")
