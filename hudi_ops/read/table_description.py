"""A table described (hudi-cli's `desc`, without a JVM): its settings in hoodie.properties, its latest schema,
and the index type and lock provider its writers use when the table or the writers' options given name them
(Hudi keeps both in the writers' configuration, not the table).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from hudi_ops.format.meta_client import MetaClient
from hudi_ops.options.keys import IndexConfig, LockConfig


@dataclass(frozen=True, slots=True)
class TableDescription:
    name: str
    database: str | None
    base_path: str
    table_type: str
    table_version: int
    timeline_layout_version: int
    record_key_fields: tuple[str, ...]
    partition_fields: tuple[str, ...]
    ordering_fields: tuple[str, ...]
    key_generator: str | None
    metadata_partitions: tuple[str, ...]
    index_type: str | None
    lock_provider: str | None
    columns: tuple[tuple[str, str], ...]  # (name, Arrow type) of the latest schema, without Hudi's meta fields

    @classmethod
    def load(cls, meta: MetaClient, options: Mapping[str, str]) -> TableDescription:
        """`options`: the writers' `hoodie.*` options (a --props file, --hoodie-conf), over the table's."""
        props = meta.properties
        settings = {**props.values, **options}
        schema = meta.table_schema()  # the latest completed write's, else the table's create schema
        return cls(
            name=props.table_name, database=props.database, base_path=meta.base_path, table_type=props.table_type,
            table_version=props.table_version, timeline_layout_version=props.timeline_layout_version,
            record_key_fields=props.record_key_fields, partition_fields=props.partition_fields,
            ordering_fields=props.ordering_fields, key_generator=props.key_generator,
            metadata_partitions=props.metadata_partitions, index_type=settings.get(IndexConfig.TYPE.name) or None,
            lock_provider=settings.get(LockConfig.PROVIDER.name) or None,
            columns=tuple((f.name, str(f.type)) for f in schema) if schema is not None else (),
        )

    def to_dict(self) -> dict[str, object]:
        out: dict[str, object] = {f: getattr(self, f) for f in self.__dataclass_fields__ if f != "columns"}
        out["columns"] = [{"name": n, "type": t} for n, t in self.columns]
        return out
