"""A vault shared by a team on S3-compatible object storage or Azure Blob Storage
(see docs/TEAM.md).

`open_vault(location, …)` gives a folder `Vault` for a path and a `TeamVault` for an
`s3://bucket/prefix` or `az://container/prefix` URI; the engine calls nothing else here.
"""

from __future__ import annotations

from pathlib import Path

from .objects import TeamStoreError, is_remote

__all__ = ["open_vault", "is_remote", "TeamStoreError"]


def open_vault(location, embed, model_id: str = "", reproject=None, create: bool = True):
    if is_remote(location):
        from .vault import TeamVault

        return TeamVault(str(location), embed, model_id, reproject, create)
    from ..vault import Vault

    return Vault(Path(location), embed, model_id=model_id, reproject=reproject,
                 create=create)
