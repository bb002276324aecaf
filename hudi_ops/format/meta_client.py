"""A table's metadata entry point: storage, hoodie.properties, timeline, file-system view, schema."""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa

from hudi_ops.errors import InvalidTableError, StorageError
from hudi_ops.format.archived_timeline import ArchivedInstant, archived_completion_times, archived_instants
from hudi_ops.format.avro_schema import avro_to_arrow
from hudi_ops.format.file_group import BaseFile, LogFile
from hudi_ops.format.fs_view import FileSystemView, data_files, list_data_files
from hudi_ops.format.instant import Action
from hudi_ops.format.metadata_table import files_partition
from hudi_ops.format.table_properties import TableProperties
from hudi_ops.format.timeline import Timeline
from hudi_ops.s3_settings import S3Settings
from hudi_ops.storage import Storage

_log = logging.getLogger(__name__)


@dataclass(frozen=True)
class MetaClient:
    """Hudi's HoodieTableMetaClient: one look at a table. Like Java's, it lists the active timeline once,
    when first asked, and builds the file-system view from that listing once; `reload()` looks again
    (what a job does after Hudi changed the table, or a poll between its tries)."""

    storage: Storage
    properties: TableProperties
    _loaded: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def open(cls, base_path: str | os.PathLike[str], *, s3: S3Settings | None = None) -> MetaClient:
        """`s3`: how to reach a table on S3 (None: from the environment)."""
        storage = Storage.for_uri(base_path, s3=s3)
        return cls(storage, TableProperties.load(storage))

    @property
    def base_path(self) -> str:
        return self.storage.uri

    @property
    def is_mor(self) -> bool:
        return self.properties.table_type == "MERGE_ON_READ"

    @property
    def commit_action(self) -> str:
        """The action a write completes as: deltacommit on MERGE_ON_READ, commit on COPY_ON_WRITE."""
        return Action.DELTA_COMMIT if self.is_mor else Action.COMMIT

    def reload(self) -> MetaClient:
        """The same table, looked at afresh (hoodie.properties is not read again)."""
        return MetaClient(self.storage, self.properties)

    def timeline(self) -> Timeline:
        """The active timeline as listed at this look's first use."""
        if "timeline" not in self._loaded:
            props = self.properties
            self._loaded["timeline"] = Timeline.load(self.storage, props.timeline_path,
                                                     layout_version=props.timeline_layout_version)
        return self._loaded["timeline"]  # type: ignore[no-any-return]

    def archived_timeline(self) -> Iterator[ArchivedInstant]:
        """The instants Hudi's archiver moved out of the active timeline (table versions 8 and 9), newest
        first. Version 6's archive (`.hoodie/archived`, log files) is not read."""
        history = self.properties.history_path
        return archived_instants(self.storage, history) if history else iter(())

    def fs_view(self, timeline: Timeline | None = None) -> FileSystemView:
        """The file groups as of `timeline` (default this look's), from one look at the table's files."""
        if timeline is not None and timeline is not self._loaded.get("timeline"):  # a caller's own (older) look
            return FileSystemView.build(timeline, *self._data_files(timeline), self._archived_completion)
        if "fs_view" not in self._loaded:
            self._loaded["fs_view"] = FileSystemView.build(self.timeline(), *self._data_files(self.timeline()),
                                                           self._archived_completion)
        return self._loaded["fs_view"]  # type: ignore[no-any-return]

    def _archived_completion(self, instant: str) -> str | None:
        """An archived instant's completion time; the archived timeline is read once, when first asked."""
        if "archived_completions" not in self._loaded:
            history = self.properties.history_path
            self._loaded["archived_completions"] = archived_completion_times(self.storage, history) if history else {}
        return self._loaded["archived_completions"].get(instant)  # type: ignore[no-any-return]

    def _data_files(self, timeline: Timeline) -> tuple[list[BaseFile], list[LogFile]]:
        """As Java's file-system view finds them: in the metadata table's `files` partition when the
        table has one (two LISTs however many partitions), else by listing every partition. A metadata
        table this reader cannot read is listed around rather than trusted."""
        try:
            found = files_partition(self.storage, self.properties, timeline)
        except (InvalidTableError, StorageError, FileNotFoundError) as e:  # its cleaner may remove a file we listed
            _log.warning("listing the partitions of %s: its metadata table could not be read (%s)", self.base_path, e)
            found = None
        if found is None:
            return list_data_files(self.storage)
        return data_files((p, name, size) for p, files in found.items() for name, size in files.items())

    def table_schema(self, timeline: Timeline | None = None) -> pa.Schema | None:
        """The user columns' schema: from the latest commit that recorded one, else the create schema."""
        avro = self.avro_schema(timeline)
        return avro_to_arrow(json.loads(avro)) if avro else None

    def avro_schema(self, timeline: Timeline | None = None) -> str | None:
        """The table's Avro schema as Hudi wrote it: the latest commit's, else the create schema."""
        for _, metadata in (timeline or self.timeline()).newest_writes():
            avro = metadata.extra_metadata.get("schema")
            if avro:
                return avro
        return self.properties.create_schema or None
