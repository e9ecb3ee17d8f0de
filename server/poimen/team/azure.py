"""The object store on Azure Blob Storage: `az://container/prefix` (see docs/TEAM.md).

The same few operations as `ObjectStore`, through the azure-storage-blob SDK (the
`azure` extra). Credentials come from `AZURE_STORAGE_CONNECTION_STRING`, else
`AZURE_STORAGE_ACCOUNT` and `AZURE_STORAGE_KEY` (endpoint
`https://<account>.blob.core.windows.net`); never from the URI. A put is create-only
(`If-None-Match: *`); errors name the operation, the blob and the error kind only.
"""

from __future__ import annotations

import os

from .objects import Layout, Location, TeamStoreError, timeout_s


def _kind(exc: Exception) -> str:
    code = getattr(exc, "error_code", None) or ""
    status = getattr(exc, "status_code", None) or ""
    return f"{type(exc).__name__} {code} {status}".strip()


class AzureStore(Layout):
    """List, get and create-only put on one Azure Blob container."""

    def __init__(self, uri: str):
        self.location = Location.parse(uri)
        timeout = timeout_s()
        try:
            from azure.storage.blob import BlobServiceClient
        except ImportError:
            raise TeamStoreError("an az:// vault needs the azure extra "
                                 "(pip install 'poimen[azure]')") from None
        options = {"connection_timeout": timeout, "read_timeout": timeout * 2,
                   "retry_total": 1}
        try:
            if os.environ.get("AZURE_STORAGE_CONNECTION_STRING"):
                service = BlobServiceClient.from_connection_string(
                    os.environ["AZURE_STORAGE_CONNECTION_STRING"], **options)
            elif os.environ.get("AZURE_STORAGE_ACCOUNT") and os.environ.get("AZURE_STORAGE_KEY"):
                account = os.environ["AZURE_STORAGE_ACCOUNT"]
                service = BlobServiceClient(f"https://{account}.blob.core.windows.net",
                                            credential=os.environ["AZURE_STORAGE_KEY"],
                                            **options)
            else:
                raise TeamStoreError("an az:// vault needs AZURE_STORAGE_CONNECTION_STRING "
                                     "or AZURE_STORAGE_ACCOUNT and AZURE_STORAGE_KEY")
        except TeamStoreError:
            raise
        except Exception as exc:  # noqa: BLE001 - a malformed connection string, by kind
            raise TeamStoreError(f"cannot make an Azure client for {self.location.uri} "
                                 f"({_kind(exc)})") from None
        self.endpoint = service.url
        self._container = service.get_container_client(self.location.bucket)

    def _fail(self, what: str, key: str, exc: Exception) -> TeamStoreError:
        return TeamStoreError(f"{what} {self.location.scheme}{self.location.bucket}/{key} "
                              f"failed ({_kind(exc)})")

    def put_new(self, key: str, data: bytes) -> bool:
        """Create `key` with `data`; False when it already exists (never overwritten)."""
        from azure.core.exceptions import ResourceExistsError, ResourceModifiedError

        try:   # overwrite=False: the SDK sends If-None-Match: * (a single-shot put)
            self._container.upload_blob(key, data, overwrite=False)
            return True
        except (ResourceExistsError, ResourceModifiedError):
            return False
        except Exception as exc:  # noqa: BLE001
            raise self._fail("put", key, exc) from None

    def get(self, key: str) -> bytes | None:
        from azure.core.exceptions import ResourceNotFoundError

        try:
            return self._container.download_blob(key).readall()
        except ResourceNotFoundError as exc:
            if getattr(exc, "error_code", None) == "ContainerNotFound":
                raise self._fail("get", key, exc) from None
            return None
        except Exception as exc:  # noqa: BLE001
            raise self._fail("get", key, exc) from None

    def list(self, prefix: str, after: str = "", delimiter: str = ""
             ) -> tuple[list[str], list[str]]:
        """(keys, common prefixes) under `prefix`, keys after `after` (Azure lists from
        the start of a prefix: the rest is filtered here)."""
        keys, prefixes = [], []
        try:
            if delimiter:
                for item in self._container.walk_blobs(name_starts_with=prefix,
                                                       delimiter=delimiter):
                    (prefixes if item.name.endswith(delimiter) else keys).append(item.name)
            else:
                keys = [b.name for b in self._container.list_blobs(name_starts_with=prefix)]
        except Exception as exc:  # noqa: BLE001
            raise self._fail("list", prefix, exc) from None
        return [k for k in keys if k > after], prefixes
