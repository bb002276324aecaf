"""`.hoodie_partition_metadata`: the marker that makes a folder a partition for Java's file listing.

Java without a metadata table only treats folders holding this file as partitions; hudi-rs ignores it.
Content (hudi-format.md §1.4): `#partition metadata`, a date line, `commitTime=<instant that created
the partition>`, `partitionDepth=<number of path segments>`. Written once and never changed.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass
from datetime import UTC, datetime

from hudi_ops.errors import FileAlreadyExistsError, InvalidTableError
from hudi_ops.format.file_names import PARTITION_METADATA_PREFIX
from hudi_ops.format.table_properties import format_properties, parse_properties
from hudi_ops.storage import Storage

FILE_NAME = PARTITION_METADATA_PREFIX
_COMMIT_TIME = "commitTime"
_DEPTH = "partitionDepth"


@dataclass(frozen=True, slots=True)
class PartitionMetadata:
    commit_time: str
    partition_depth: int


def partition_depth(partition_path: str) -> int:
    """Number of path segments: 0 for the table root (non-partitioned), 2 for `byteField=10/shortField=3`."""
    return len([s for s in partition_path.split("/") if s])


def metadata_path(partition_path: str) -> str:
    """Table-relative path of the partition's metadata file."""
    return posixpath.join(partition_path.strip("/"), FILE_NAME)


def write_partition_metadata(storage: Storage, partition_path: str, commit_time: str) -> bool:
    """Create the partition's metadata file unless it exists; returns whether this call wrote it.

    Concurrent writers may race to create it; whichever wins, the file is equally valid.
    """
    rel = metadata_path(partition_path)
    if storage.exists(rel):
        return False
    values = {_COMMIT_TIME: commit_time, _DEPTH: str(partition_depth(partition_path))}
    text = format_properties(values, header_time=datetime.now(UTC), comment="partition metadata")
    try:
        storage.create_new(rel, text.encode("ascii"))
    except FileAlreadyExistsError:
        return False
    return True


def read_partition_metadata(storage: Storage, partition_path: str) -> PartitionMetadata | None:
    """The partition's metadata, or None when the folder has no metadata file."""
    rel = metadata_path(partition_path)
    try:
        values = parse_properties(storage.read_bytes(rel).decode("latin-1"))
    except FileNotFoundError:
        return None
    commit_time, depth = values.get(_COMMIT_TIME), values.get(_DEPTH, "")
    if not commit_time or not depth.isdigit():
        raise InvalidTableError(
            f"{storage.uri_of(rel)} lacks a valid {_COMMIT_TIME} or {_DEPTH}: it is damaged; delete it and "
            "let the next write to the partition recreate it"
        )
    return PartitionMetadata(commit_time, int(depth))
