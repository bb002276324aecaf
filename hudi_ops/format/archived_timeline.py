"""The archived timeline of table versions 8 and 9: Hudi's LSM history under `.hoodie/timeline/history/`.

Hudi's archiver moves completed instants out of the active timeline once it holds more than
`hoodie.keep.max.commits` of them. Each parquet file of the history holds one row per archived
instant (requested and completion time, action, the completed instant file's bytes); `_version_`
names the manifest that lists the files of the current version (Hudi's `LSMTimeline`).
"""

from __future__ import annotations

import json
import posixpath
from collections.abc import Iterator
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.parquet as pq

from hudi_ops.errors import InvalidTableError
from hudi_ops.format.commit_metadata import CommitMetadata
from hudi_ops.format.instant import Action
from hudi_ops.storage import Storage

VERSION_FILE = "_version_"
MANIFEST_PREFIX = "manifest_"


@dataclass(frozen=True, slots=True)
class ArchivedInstant:
    requested_time: str
    completion_time: str | None
    action: str
    metadata: bytes | None  # the completed instant file, as it was on the active timeline

    def commit_metadata(self) -> CommitMetadata:
        if self.action not in Action.WRITE_ACTIONS or self.metadata is None:
            raise InvalidTableError(f"archived {self.action} {self.requested_time} carries no commit metadata")
        return CommitMetadata.parse(self.metadata)


def archived_instants(storage: Storage, history_folder: str) -> Iterator[ArchivedInstant]:
    """The instants of the history's current version, newest first, read a file at a time (a search
    that finds what it wants in the newest file reads no other)."""
    for table in _history_files(storage, history_folder, ["instantTime", "completionTime", "action", "metadata"]):
        rows = [ArchivedInstant(r["instantTime"], r["completionTime"], r["action"], r["metadata"])
                for r in table.to_pylist()]
        yield from sorted(rows, key=lambda i: (i.completion_time or i.requested_time, i.requested_time), reverse=True)


def archived_completion_times(storage: Storage, history_folder: str) -> dict[str, str | None]:
    """Requested time -> completion time of every archived instant (their metadata left unread)."""
    return {r["instantTime"]: r["completionTime"]
            for table in _history_files(storage, history_folder, ["instantTime", "completionTime"])
            for r in table.to_pylist()}


def _history_files(storage: Storage, history_folder: str, columns: list[str]) -> Iterator[pa.Table]:
    manifest = _current_manifest(storage, history_folder)
    if manifest is None:
        return
    try:
        files = [f["fileName"] for f in json.loads(storage.read_bytes(manifest))["files"]]
    except (ValueError, KeyError, TypeError) as e:
        raise InvalidTableError(f"{storage.uri_of(manifest)} is not an LSM timeline manifest: {e}") from None
    # `<min instant>_<max instant>_<level>.parquet`: newest files first; a file's instants do not
    # overlap another's of the same version
    for name in sorted(files, key=lambda n: n.split("_")[1], reverse=True):
        yield pq.read_table(storage.full_path(posixpath.join(history_folder, name)), filesystem=storage.fs,
                            columns=columns)


def _current_manifest(storage: Storage, folder: str) -> str | None:
    """`_version_` names the version; the highest manifest stands in when it cannot be read, as in Java."""
    try:
        version = int(storage.read_bytes(posixpath.join(folder, VERSION_FILE)).decode().strip())
        return posixpath.join(folder, f"{MANIFEST_PREFIX}{version}")
    except (FileNotFoundError, ValueError):
        versions = [int(f.name.removeprefix(MANIFEST_PREFIX)) for f in storage.list_files(folder)
                    if f.name.startswith(MANIFEST_PREFIX) and f.name.removeprefix(MANIFEST_PREFIX).isdigit()]
        return posixpath.join(folder, f"{MANIFEST_PREFIX}{max(versions)}") if versions else None
