"""The object store a team vault lives on (S3 or any S3-compatible service).

Layout under `s3://bucket/prefix/`: `poimen.json` (the marker `mem init` creates) and
`log/<writer>/<seq>.jsonl`, each writer's chunks numbered from 0. Every put is
create-only (`If-None-Match: *`): an existing object is never overwritten. Endpoint and
credentials come from boto3's standard chain (AWS_* variables, config files, profiles);
errors name the operation, the object and the error kind, never a message the service
or the client wrote (those may quote a URL or a key id).
"""

from __future__ import annotations

import os
from dataclasses import dataclass

SCHEMES = ("s3://", "az://")
MARKER = "poimen.json"
SEQ_DIGITS = 12


class TeamStoreError(RuntimeError):
    """The object store could not be used (unreachable, refused, not a vault)."""


def is_remote(location) -> bool:
    return isinstance(location, str) and location.startswith(SCHEMES)


@dataclass(frozen=True)
class Location:
    bucket: str   # an S3 bucket or an Azure container
    prefix: str   # no leading or trailing slash; may be empty
    scheme: str = "s3://"

    @classmethod
    def parse(cls, uri: str) -> "Location":
        scheme = next((s for s in SCHEMES if uri.startswith(s)), "")
        bucket, _, prefix = uri[len(scheme):].partition("/")
        if not scheme or not bucket or any(c in bucket for c in "@:?#"):
            # not echoed: a mistyped URI may carry a key
            raise TeamStoreError("a team vault is s3://bucket/prefix or az://container/prefix "
                                 "(credentials come from the environment, never the URI)")
        return cls(bucket, prefix.strip("/"), scheme)

    @property
    def uri(self) -> str:
        base = f"{self.scheme}{self.bucket}"
        return f"{base}/{self.prefix}" if self.prefix else base

    def key(self, *parts: str) -> str:
        return "/".join(([self.prefix] if self.prefix else []) + list(parts))


def _kind(exc: Exception) -> str:
    """An error's kind without its text: a class name, an S3 code and HTTP status."""
    response = getattr(exc, "response", None)
    if isinstance(response, dict):
        code = response.get("Error", {}).get("Code", "")
        status = response.get("ResponseMetadata", {}).get("HTTPStatusCode", "")
        return f"{type(exc).__name__} {code} {status}".strip()
    return type(exc).__name__


def _status(exc: Exception) -> int | None:
    response = getattr(exc, "response", None)
    if isinstance(response, dict):
        return response.get("ResponseMetadata", {}).get("HTTPStatusCode")
    return None


def timeout_s() -> float:
    """Seconds to connect (twice that to read) to the store: POIMEN_S3_TIMEOUT_S."""
    raw = os.environ.get("POIMEN_S3_TIMEOUT_S", "5")
    try:
        timeout = float(raw)
    except ValueError:
        timeout = 0.0
    if not 0 < timeout <= 600:
        raise TeamStoreError(f"POIMEN_S3_TIMEOUT_S must be 0-600 seconds, not {raw!r}")
    return timeout


def open_store(uri: str):
    """The store for a team vault's URI: Azure Blob for az://, else S3."""
    if uri.startswith("az://"):
        from .azure import AzureStore

        return AzureStore(uri)
    return ObjectStore(uri)


class Layout:
    """The vault's layout on any store with list, get and create-only put."""

    location: Location

    @property
    def uri(self) -> str:
        return self.location.uri

    def chunk_key(self, writer: str, seq: int) -> str:
        return self.location.key("log", writer, f"{seq:0{SEQ_DIGITS}d}.jsonl")

    def writers(self) -> list[str]:
        base = self.location.key("log") + "/"
        _, prefixes = self.list(base, delimiter="/")
        return sorted(p[len(base):].rstrip("/") for p in prefixes)

    def chunks(self, writer: str, after: int = -1) -> list[int]:
        """Sequence numbers of `writer`'s chunks past `after`, in order."""
        base = self.location.key("log", writer) + "/"
        start = self.chunk_key(writer, after) if after >= 0 else ""
        keys, _ = self.list(base, after=start)
        seqs = []
        for key in keys:
            name = key[len(base):]
            if name.endswith(".jsonl") and name[:-6].isdigit():
                seqs.append(int(name[:-6]))
        return sorted(seqs)

    def has_marker(self) -> bool:
        return self.get(self.location.key(MARKER)) is not None

    def create_marker(self, body: bytes) -> None:
        self.put_new(self.location.key(MARKER), body)


class ObjectStore(Layout):
    """The few object operations a team vault needs on S3: list, get, create-only put."""

    def __init__(self, uri: str):
        import boto3
        from botocore.config import Config

        self.location = Location.parse(uri)
        timeout = timeout_s()
        config = Config(connect_timeout=timeout, read_timeout=timeout * 2,
                        retries={"max_attempts": 2, "mode": "standard"})
        try:
            self._client = boto3.session.Session().client("s3", config=config)
        except Exception as exc:  # noqa: BLE001 - a bad profile or region, named by kind
            raise TeamStoreError(f"cannot make an S3 client for {self.location.uri} "
                                 f"({_kind(exc)})") from None

    @property
    def endpoint(self) -> str:
        return self._client.meta.endpoint_url or ""

    def _fail(self, what: str, key: str, exc: Exception) -> TeamStoreError:
        return TeamStoreError(f"{what} s3://{self.location.bucket}/{key} failed ({_kind(exc)})")

    def put_new(self, key: str, data: bytes) -> bool:
        """Create `key` with `data`; False when it already exists (never overwritten)."""
        try:
            self._client.put_object(Bucket=self.location.bucket, Key=key, Body=data,
                                    IfNoneMatch="*")
            return True
        except Exception as exc:  # noqa: BLE001 - mapped to our error below
            if _status(exc) in (409, 412):   # 409: a concurrent create of the same key
                return False
            raise self._fail("put", key, exc) from None

    def get(self, key: str) -> bytes | None:
        """The object's bytes, or None when there is no such object."""
        try:
            return self._client.get_object(Bucket=self.location.bucket, Key=key)["Body"].read()
        except Exception as exc:  # noqa: BLE001
            if _status(exc) == 404:
                return None
            raise self._fail("get", key, exc) from None

    def list(self, prefix: str, after: str = "", delimiter: str = "") -> tuple[list[str], list[str]]:
        """(keys, common prefixes) under `prefix`, keys after `after`, all pages."""
        keys, prefixes, token = [], [], None
        while True:
            args = {"Bucket": self.location.bucket, "Prefix": prefix}
            if after:
                args["StartAfter"] = after
            if delimiter:
                args["Delimiter"] = delimiter
            if token:
                args["ContinuationToken"] = token
            try:
                page = self._client.list_objects_v2(**args)
            except Exception as exc:  # noqa: BLE001
                raise self._fail("list", prefix, exc) from None
            keys += [o["Key"] for o in page.get("Contents", ())]
            prefixes += [p["Prefix"] for p in page.get("CommonPrefixes", ())]
            if not page.get("IsTruncated"):
                return keys, prefixes
            token = page["NextContinuationToken"]
