"""File groups and file slices: a base file and the log files written on top of it."""

from __future__ import annotations

import posixpath
from dataclasses import dataclass, field

from hudi_ops.format.file_names import BaseFileName, LogFileName


def in_partition(partition_path: str, name: str) -> str:
    """A file's table-relative path: `<partition>/<name>`, or `<name>` for the root partition."""
    return posixpath.join(partition_path, name) if partition_path else name


class _PartitionFile:
    """What base and log files share: a name holding the file id and instant, inside a partition."""

    __slots__ = ()
    partition_path: str
    name: BaseFileName | LogFileName

    @property
    def path(self) -> str:
        return in_partition(self.partition_path, self.name.file_name)

    @property
    def file_id(self) -> str:
        return self.name.file_id

    @property
    def instant_time(self) -> str:
        return self.name.instant_time


@dataclass(frozen=True, slots=True)
class BaseFile(_PartitionFile):
    partition_path: str
    name: BaseFileName
    size: int = 0


@dataclass(frozen=True, slots=True)
class LogFile(_PartitionFile):
    partition_path: str
    name: LogFileName
    size: int = 0


@dataclass(frozen=True, slots=True)
class FileGroupId:
    partition_path: str
    file_id: str

    def __str__(self) -> str:
        return f"{self.partition_path}/{self.file_id}" if self.partition_path else self.file_id


@dataclass(frozen=True, slots=True)
class FileSlice:
    """The files of one file group from one base instant on: an optional base file plus logs."""

    group: FileGroupId
    base_instant: str
    base_file: BaseFile | None = None
    log_files: tuple[LogFile, ...] = ()

    @property
    def partition_path(self) -> str:
        return self.group.partition_path

    @property
    def file_id(self) -> str:
        return self.group.file_id

    @property
    def total_size(self) -> int:
        return (self.base_file.size if self.base_file else 0) + sum(f.size for f in self.log_files)


@dataclass(slots=True)
class FileGroup:
    """All slices of one file group, newest base instant first."""

    id: FileGroupId
    slices: list[FileSlice] = field(default_factory=list)

    @property
    def latest_slice(self) -> FileSlice | None:
        return self.slices[0] if self.slices else None
