"""Write markers: `.hoodie/.temp/<instant>/<partition>/<file>.marker.<IOType>`, one per data file.

A marker is created before its data file, so after a crash the markers name every file the
instant may have written, and a rollback can delete exactly those.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass
from enum import Enum

from hudi_ops.format.file_group import in_partition
from hudi_ops.format.timeline import META_FOLDER
from hudi_ops.storage import Storage

TEMP_FOLDER = posixpath.join(META_FOLDER, ".temp")
_SUFFIX = ".marker."


class IOType(Enum):
    CREATE = "CREATE"
    MERGE = "MERGE"
    APPEND = "APPEND"


@dataclass(frozen=True, slots=True)
class Marker:
    partition_path: str
    file_name: str
    io_type: IOType

    @property
    def data_file_path(self) -> str:
        return in_partition(self.partition_path, self.file_name)


class WriteMarkers:
    """The markers of one instant."""

    def __init__(self, storage: Storage, instant_time: str) -> None:
        self.storage = storage
        self.instant_time = instant_time
        self.folder = posixpath.join(TEMP_FOLDER, instant_time)

    def create(self, partition_path: str, file_name: str, io_type: IOType) -> Marker:
        rel = posixpath.join(self.folder, in_partition(partition_path, f"{file_name}{_SUFFIX}{io_type.value}"))
        self.storage.write_bytes(rel, b"")
        return Marker(partition_path, file_name, io_type)

    def all(self) -> list[Marker]:
        out = []
        prefix = len(self.folder) + 1
        for f in self.storage.walk_files(self.folder):
            rel = f.path[prefix:]
            name, sep, io = posixpath.basename(rel).rpartition(_SUFFIX)
            if sep and io in IOType.__members__:
                out.append(Marker(posixpath.dirname(rel), name, IOType(io)))
        return out

    def delete_all(self) -> None:
        self.storage.delete_dir(self.folder)
