"""Attachments as objects in an S3-compatible store (AWS S3, MinIO, Ceph,
Garage, …) through boto3.

Nothing secret is in the ini file: boto3 reads the credentials, the region
and the endpoint of a store that is not AWS from the standard environment
variables (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_DEFAULT_REGION,
AWS_ENDPOINT_URL) or from an instance role. Uploads go through boto3's
managed transfer (multipart above 8 MB, read in chunks); downloads stream
the object's body. An object store cannot join the database transaction, so
`ehs_core.attachments.storage` removes an object again when the request
aborts and deletes one only after the row's deletion committed.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, BinaryIO
from urllib.parse import urlsplit

from sqlalchemy.orm import Session

from ehs_core.attachments.backends.base import CHUNK_SIZE, Backend, Missing


class S3Backend(Backend):
    name = "s3"

    def __init__(self, bucket: str, prefix: str = "", client: Any = None) -> None:
        self.bucket = bucket
        self.prefix = prefix
        self._client = client

    @classmethod
    def from_url(cls, url: str) -> S3Backend:
        parts = urlsplit(url)
        prefix = parts.path.strip("/")
        return cls(parts.netloc, prefix + "/" if prefix else "")

    def describe(self) -> str:
        return f"s3://{self.bucket}/{self.prefix}"

    @property
    def client(self) -> Any:
        # Made on first use, not at start-up: a web process that never touches
        # a file makes no connection, and boto3 is imported only when needed.
        if self._client is None:
            import boto3
            from botocore.config import Config

            self._client = boto3.client("s3", config=Config(retries={"mode": "standard"}))
        return self._client

    def write(self, dbsession: Session, key: str, source: BinaryIO) -> int:
        from boto3.s3.transfer import TransferConfig

        source.seek(0, 2)
        size = source.tell()
        source.seek(0)
        self.client.upload_fileobj(source, self.bucket, self.prefix + key,
                                   Config=TransferConfig(io_chunksize=CHUNK_SIZE, use_threads=False))
        return size

    def open(self, key: str) -> Iterator[bytes]:
        try:
            body = self.client.get_object(Bucket=self.bucket, Key=self.prefix + key)["Body"]
        except self.client.exceptions.NoSuchKey:
            raise Missing(key) from None
        return _read(body)

    def delete(self, dbsession: Session, key: str) -> None:
        self.client.delete_object(Bucket=self.bucket, Key=self.prefix + key)

    def keys(self) -> Iterator[str]:
        pages = self.client.get_paginator("list_objects_v2").paginate(Bucket=self.bucket, Prefix=self.prefix)
        for page in pages:
            for item in page.get("Contents", ()):
                yield item["Key"][len(self.prefix):]


def _read(body: Any) -> Iterator[bytes]:
    try:
        yield from body.iter_chunks(CHUNK_SIZE)
    finally:
        body.close()
