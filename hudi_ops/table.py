"""`HudiTable`: the Python API in the spirit of delta-rs and pyiceberg.

    table = HudiTable.create("/data/trips", name="trips", record_key="uuid", partition_fields=["city"],
                             ordering_field="ts")
    table.upsert(batch)
    table.read(as_of="20250101000000000", columns=["uuid", "fare"], filters=[("city", "=", "sf")])
    table.incremental(begin, end)
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence

import pyarrow as pa

from hudi_ops.client.engine_context import Engine
from hudi_ops.client.write_client import CommitResult, WriteClient, WriteOperation
from hudi_ops.concurrency.heartbeat import HEARTBEAT_INTERVAL_MS, HEARTBEAT_TOLERABLE_MISSES
from hudi_ops.concurrency.locks.base import LOCK_WAIT_MS
from hudi_ops.concurrency.locks.registry import lock_provider
from hudi_ops.config import WriteConfig
from hudi_ops.engine.local import LocalEngine
from hudi_ops.errors import InvalidInputError, TableExistsError, WriteConflictError
from hudi_ops.format.avro_schema import arrow_to_avro, schema_to_json
from hudi_ops.format.fs_view import FileSystemView
from hudi_ops.format.meta_client import MetaClient
from hudi_ops.format.table_properties import TableProperties
from hudi_ops.format.timeline import Timeline
from hudi_ops.read import query
from hudi_ops.read.filters import Filter
from hudi_ops.services.rollback import RollbackResult, rollback_failed_writes
from hudi_ops.storage import Storage

#: the folders Hudi 1.0's table init creates under `.hoodie/` (layout 2)
_META_DIRS = (
    ".hoodie/timeline/history", ".hoodie/.temp", ".hoodie/.aux/.bootstrap/.partitions",
    ".hoodie/.aux/.bootstrap/.fileids", ".hoodie/.schema",
)


class HudiTable:
    def __init__(self, meta: MetaClient) -> None:
        self.meta = meta

    @classmethod
    def create(
        cls,
        path: str | os.PathLike[str],
        *,
        name: str,
        record_key: str | Sequence[str],
        table_type: str = "COPY_ON_WRITE",
        partition_fields: Sequence[str] = (),
        ordering_field: str | None = None,
        merge_mode: str | None = None,
        hive_style: bool = False,
        schema: pa.Schema | None = None,
        database: str = "default",
    ) -> HudiTable:
        """Create an empty table version 8. Event-time ordering when an ordering field is given."""
        storage = Storage.for_uri(path)
        if storage.exists(".hoodie/hoodie.properties"):
            raise TableExistsError(storage.uri)
        keys = (record_key,) if isinstance(record_key, str) else tuple(record_key)
        if schema is not None:
            for f in (*keys, *partition_fields, *([ordering_field] if ordering_field else [])):
                if schema.get_field_index(f) < 0:
                    raise InvalidInputError(f"field {f!r} is not in the given schema ({', '.join(schema.names)})")
        props = TableProperties.for_new_table(
            table_name=name,
            table_type=table_type.upper(),
            record_key_fields=keys,
            partition_fields=tuple(partition_fields),
            ordering_field=ordering_field,
            merge_mode=merge_mode,
            hive_style=hive_style,
            database=database,
            create_schema=schema_to_json(arrow_to_avro(schema, table_name=name)) if schema is not None else None,
        )
        for d in _META_DIRS:
            storage.makedirs(d)
        props.store(storage, create=True)
        return cls(MetaClient(storage, props))

    @classmethod
    def open(cls, path: str | os.PathLike[str]) -> HudiTable:
        return cls(MetaClient.open(path))

    # -- metadata --------------------------------------------------------------------------------

    @property
    def base_path(self) -> str:
        return self.meta.base_path

    @property
    def properties(self) -> TableProperties:
        return self.meta.properties

    def timeline(self) -> Timeline:
        return self.meta.timeline()

    def file_system_view(self, *, as_of: str | None = None) -> FileSystemView:
        return self.meta.fs_view(as_of=as_of)

    def schema(self) -> pa.Schema | None:
        return self.meta.table_schema()

    # -- reads -----------------------------------------------------------------------------------

    def read(
        self,
        *,
        as_of: str | None = None,
        columns: Sequence[str] | None = None,
        filters: Sequence[Filter] = (),
        read_optimized: bool = False,
    ) -> pa.Table:
        return query.snapshot(self.meta, as_of=as_of, columns=columns, filters=filters, read_optimized=read_optimized)

    def incremental(
        self, begin: str, end: str | None = None, *, columns: Sequence[str] | None = None,
        filters: Sequence[Filter] = (),
    ) -> pa.Table:
        return query.incremental(self.meta, begin, end, columns=columns, filters=filters)

    # -- writes ----------------------------------------------------------------------------------

    def write_client(self, options: Mapping[str, str] | None = None, *, engine: Engine | None = None) -> WriteClient:
        return WriteClient(self.meta, options, engine=engine or LocalEngine())

    def write(
        self, batch: pa.Table, operation: WriteOperation | str, *, options: Mapping[str, str] | None = None,
        extra_metadata: Mapping[str, str] | None = None, engine: Engine | None = None,
    ) -> CommitResult:
        """Start, write and commit in one call; a failed write is undone and never becomes visible.

        A write conflict is retried from scratch up to `hoodie.write.num.retries.on.conflict.failures` times.
        `extra_metadata` goes into the commit (e.g. a job's source checkpoint); `engine` runs the write tasks.
        """
        op = operation if isinstance(operation, WriteOperation) else WriteOperation.parse(operation)
        retries = self.meta.properties.as_config().merged(options).require(WriteConfig.NUM_RETRIES_ON_CONFLICT)
        failures = 0
        while True:
            try:
                return self._write_once(batch, op, options, extra_metadata, engine)
            except WriteConflictError:
                failures += 1
                if failures > retries:
                    raise

    def _write_once(
        self, batch: pa.Table, op: WriteOperation, options: Mapping[str, str] | None,
        extra_metadata: Mapping[str, str] | None, engine: Engine | None,
    ) -> CommitResult:
        with self.write_client(options, engine=engine) as client:
            instant = client.start_commit()
            try:
                statuses = client.write(batch, instant, op)
            except BaseException:
                client.abort(instant)
                raise
            return client.commit(instant, statuses, extra_metadata=extra_metadata)

    def rollback_failed_writes(
        self, *, dry_run: bool = True, options: Mapping[str, str] | None = None
    ) -> list[RollbackResult]:
        """Roll back pending writes whose writer's heartbeat expired; `dry_run` only lists them."""
        config = self.meta.properties.as_config().merged(options)
        lock = lock_provider(config, self.meta.storage, self.meta.properties.table_name)
        try:
            return rollback_failed_writes(
                self.meta, lock, lock_wait_s=config.require(LOCK_WAIT_MS) / 1000,
                interval_ms=config.require(HEARTBEAT_INTERVAL_MS),
                tolerable_misses=config.require(HEARTBEAT_TOLERABLE_MISSES), dry_run=dry_run,
            )
        finally:
            lock.close()

    def upsert(self, batch: pa.Table, *, options: Mapping[str, str] | None = None) -> CommitResult:
        return self.write(batch, WriteOperation.UPSERT, options=options)

    def insert(self, batch: pa.Table, *, options: Mapping[str, str] | None = None) -> CommitResult:
        return self.write(batch, WriteOperation.INSERT, options=options)

    def bulk_insert(self, batch: pa.Table, *, options: Mapping[str, str] | None = None) -> CommitResult:
        return self.write(batch, WriteOperation.BULK_INSERT, options=options)

    def delete(self, keys: pa.Table, *, options: Mapping[str, str] | None = None) -> CommitResult:
        return self.write(keys, WriteOperation.DELETE, options=options)
