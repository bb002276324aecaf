"""A table's metadata entry point: storage, hoodie.properties, timeline, file-system view, schema."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from dataclasses import dataclass

import pyarrow as pa

from hudi_ops.format.archived_timeline import ArchivedInstant, archived_instants
from hudi_ops.format.avro_schema import avro_to_arrow
from hudi_ops.format.fs_view import FileSystemView
from hudi_ops.format.instant import Action
from hudi_ops.format.table_properties import TableProperties
from hudi_ops.format.timeline import Timeline
from hudi_ops.storage import Storage


@dataclass(frozen=True)
class MetaClient:
    """Hudi's HoodieTableMetaClient: what is needed to look at a table, loaded on demand."""

    storage: Storage
    properties: TableProperties

    @classmethod
    def open(cls, base_path: str | os.PathLike[str]) -> MetaClient:
        storage = Storage.for_uri(base_path)
        return cls(storage, TableProperties.load(storage))

    def reload_properties(self) -> MetaClient:
        return MetaClient(self.storage, TableProperties.load(self.storage))

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

    def timeline(self) -> Timeline:
        props = self.properties
        return Timeline.load(self.storage, props.timeline_path, layout_version=props.timeline_layout_version)

    def archived_timeline(self) -> tuple[ArchivedInstant, ...]:
        """The instants Hudi's archiver moved out of the active timeline (table versions 8 and 9)."""
        history = self.properties.history_path
        return archived_instants(self.storage, history) if history else ()

    def fs_view(
        self, timeline: Timeline | None = None, *, as_of: str | None = None, partitions: Iterable[str] | None = None
    ) -> FileSystemView:
        return FileSystemView.build(self.storage, timeline or self.timeline(), as_of=as_of, partitions=partitions)

    def table_schema(self, timeline: Timeline | None = None) -> pa.Schema | None:
        """The user columns' schema: from the latest commit that recorded one, else the create schema."""
        tl = timeline or self.timeline()
        for inst in sorted(tl.completed_writes(), key=tl.completion_time, reverse=True):
            avro = tl.commit_metadata(inst).extra_metadata.get("schema")
            if avro:
                return avro_to_arrow(json.loads(avro))
        create = self.properties.create_schema
        return avro_to_arrow(json.loads(create)) if create else None
