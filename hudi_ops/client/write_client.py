"""The write client: plan a write per file group, run it on an engine, commit it on the timeline.

Two-phase, as Hudi's write client: `start_commit()` writes `<T>.<action>.requested` and starts a
heartbeat; `upsert/insert/bulk_insert/delete(batch, T)` tags records, writes the inflight
workload profile, then the data files (each after its marker); `commit(T, statuses)` takes the
lock, re-checks the table, and creates `<T>_<C>.<action>` last. Until then nothing is visible.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa

from hudi_ops.client.engine_context import DatasetEngine, Engine
from hudi_ops.client.handles import BloomOptions, WriteContext, WriteStatus
from hudi_ops.client.keygen import KeyGenerator
from hudi_ops.client.memory_planner import plan_in_memory
from hudi_ops.client.partitioner import SizingRules
from hudi_ops.client.precombine import MergeMode, check_ordering_field
from hudi_ops.client.write_job import Deduper, RecordPreparer, WriteJob, WriteScope
from hudi_ops.client.write_operation import WriteOperation
from hudi_ops.client.write_schema import write_schema
from hudi_ops.concurrency.conflict import check_conflicts, rewritten_file_groups
from hudi_ops.concurrency.heartbeat import (
    HEARTBEAT_INTERVAL_MS,
    HEARTBEAT_TOLERABLE_MISSES,
    Heartbeat,
    is_expired,
)
from hudi_ops.concurrency.locks.base import LOCK_WAIT_MS, locked
from hudi_ops.concurrency.locks.registry import lock_provider
from hudi_ops.concurrency.markers import WriteMarkers
from hudi_ops.config import ConfigKey, HoodieConfig, TableConfigKeys, WriteConfig
from hudi_ops.errors import (
    ConfigError,
    HeartbeatExpiredError,
    InvalidInputError,
    TimelineError,
)
from hudi_ops.format.avro_schema import arrow_to_avro, schema_to_json
from hudi_ops.format.commit_metadata import CommitMetadata, WriteStat
from hudi_ops.format.instant import Instant, InstantTimeGenerator, State
from hudi_ops.format.meta_client import MetaClient
from hudi_ops.format.table_properties import TableProperties, check_writable_v8
from hudi_ops.format.timeline import Timeline
from hudi_ops.format.transitions import (
    create_requested,
    delete_pending,
    transition_to_completed,
    transition_to_inflight,
)

__all__ = ["CommitResult", "WriteClient", "WriteOperation"]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class CommitResult:
    instant_time: str
    completion_time: str
    operation: str
    num_writes: int
    num_inserts: int
    num_updates: int
    num_deletes: int
    files_written: int
    bytes_written: int
    partitions: tuple[str, ...] = field(default=())
    records: int = 0  # input records the write took in, after precombine (deletes: keys found)
    #: where the time went: index_lookup (keys, precombine, tagging, insert sizing: everything before
    #: the inflight file), write (the data files), commit (conflict check and completed instant, with lock wait)
    durations_ms: dict[str, float] = field(default_factory=dict)
    lock_wait_ms: float = 0.0  # waiting for the table lock at commit
    lock_held_ms: float = 0.0  # lock acquired -> completed instant written (RFC-22's critical section)

    def to_dict(self) -> dict[str, Any]:
        return {k: (list(v) if isinstance(v, tuple) else v) for k, v in self.__dict__.items()}


@dataclass
class _Pending:
    heartbeat: Heartbeat
    operation: WriteOperation = WriteOperation.UPSERT
    schema: pa.Schema = field(default_factory=lambda: pa.schema([]))
    written: bool = False  # its inflight file and data files exist
    records: int = 0  # records taken in (after precombine), as the workload profile counts them
    durations_ms: dict[str, float] = field(default_factory=dict)


class WriteClient:
    def __init__(self, meta: MetaClient, options: Mapping[str, str] | None = None, *, engine: Engine) -> None:
        self.meta = meta
        self.config = meta.properties.as_config().merged(options)
        _validate(self.config)
        _check_fixed_by_table(self.config, meta.properties)
        self.engine = engine
        props = meta.properties
        self.keygen = KeyGenerator(
            props.record_key_fields, props.partition_fields,
            hive_style=props.hive_style_partitioning, url_encode=props.url_encode_partitioning,
            type_name=props.keygen_type,
        )
        self.ordering_field = props.ordering_field
        self.merge_mode = MergeMode.of_table(props.merge_mode)
        requested_mode = self.config.get(WriteConfig.RECORD_MERGE_MODE)
        if requested_mode and requested_mode.upper() != self.merge_mode.value:
            raise InvalidInputError(
                f"hoodie.record.merge.mode={requested_mode} differs from the table's {self.merge_mode.value}; "
                "the merge mode is fixed when the table is created"
            )
        self._pending: dict[str, _Pending] = {}
        self._lock = lock_provider(self.config, meta.storage, meta.properties.table_name)

    def close(self) -> None:
        """Stop the heartbeats of instants left open and let go of the lock provider's connection."""
        for pending in self._pending.values():
            pending.heartbeat.stop(delete=False)  # the instant stays pending; its heartbeat will expire
        self._pending.clear()
        self._lock.close()

    def __enter__(self) -> WriteClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- phase 1 ---------------------------------------------------------------------------------

    def start_commit(self) -> str:
        """Write `<T>.<action>.requested` for a new instant T, start its heartbeat, return T."""
        check_writable_v8(self.meta.reload_properties().properties)
        interval_ms = self.config.require(HEARTBEAT_INTERVAL_MS)
        with locked(self._lock, self._lock_wait_s):
            timeline = self.meta.timeline()
            instant = InstantTimeGenerator.next(timeline.max_time)
            # the heartbeat exists before the instant does, so no one takes the new instant for a dead one
            hb = Heartbeat(self.meta.storage, instant, interval_ms=interval_ms).start()
            try:
                create_requested(timeline, instant, self.meta.commit_action)
            except BaseException:
                hb.stop()
                raise
        self._pending[instant] = _Pending(hb)
        return instant

    def upsert(self, batch: pa.Table, instant: str) -> list[WriteStatus]:
        return self.write(batch, instant, WriteOperation.UPSERT)

    def insert(self, batch: pa.Table, instant: str) -> list[WriteStatus]:
        return self.write(batch, instant, WriteOperation.INSERT)

    def bulk_insert(self, batch: pa.Table, instant: str) -> list[WriteStatus]:
        return self.write(batch, instant, WriteOperation.BULK_INSERT)

    def delete(self, batch: pa.Table, instant: str) -> list[WriteStatus]:
        """Delete the records whose keys (record key and partition fields) are in `batch`."""
        return self.write(batch, instant, WriteOperation.DELETE)

    def write(self, batch: Any, instant: str, operation: WriteOperation) -> list[WriteStatus]:
        """Write `batch` (an Arrow table, or a data set of the engine's own kind, e.g. a Spark
        DataFrame) as instant `instant`: tag, write the inflight profile, then the data files."""
        if instant not in self._pending:
            raise TimelineError(
                f"instant {instant} was not started by this client; call start_commit()", instant=instant
            )
        timeline = self.meta.timeline()
        states = timeline.states_of(instant)
        if len(states) != 1 or states[0].state is not State.REQUESTED:
            raise TimelineError(
                f"instant {instant} is not freshly requested; each instant takes exactly one write", instant=instant
            )
        if isinstance(batch, pa.RecordBatch):
            batch = pa.Table.from_batches([batch])
        started = time.perf_counter()
        if isinstance(batch, pa.Table):
            job = self._job(timeline, operation, states[0], batch.schema, started)
            statuses = self.engine.map(job.runner, plan_in_memory(job, batch))
        elif isinstance(self.engine, DatasetEngine):
            job = self._job(timeline, operation, states[0], self.engine.input_schema(batch), started)
            statuses = self.engine.write_dataset(job, batch)
        else:
            raise InvalidInputError(
                f"the {self.engine.name} engine writes Arrow tables, not {type(batch).__name__}; "
                "convert the data to a pyarrow.Table or write with an engine that takes it (SparkEngine)"
            )
        durations = self._pending[instant].durations_ms
        durations["write"] = round((time.perf_counter() - started) * 1000 - durations["index_lookup"], 1)
        return statuses

    # -- phase 2 ---------------------------------------------------------------------------------

    def commit(
        self, instant: str, statuses: Sequence[WriteStatus], *, extra_metadata: Mapping[str, str] | None = None
    ) -> CommitResult:
        pending = self._pending.get(instant)
        if pending is None:
            raise TimelineError(f"instant {instant} was not started by this client", instant=instant)
        stats = [s.stat for s in statuses]
        by_partition: dict[str, list[WriteStat]] = {}
        for s in stats:
            by_partition.setdefault(s.partition_path or "", []).append(s)
        extra = {"schema": schema_to_json(arrow_to_avro(pending.schema, table_name=self.meta.properties.table_name))}
        extra.update(extra_metadata or {})
        metadata = CommitMetadata(
            partition_to_write_stats={p: tuple(v) for p, v in by_partition.items()},
            compacted=False,
            extra_metadata=extra,
            version=None,
            operation_type=pending.operation.value,
        )
        if not pending.written:  # misuse: nothing to commit yet; fails without undoing anything
            raise TimelineError(
                f"instant {instant} has no inflight file: write data with it before committing", instant=instant
            )
        committing = time.perf_counter()
        try:
            check_writable_v8(self.meta.reload_properties().properties)
            asked = time.perf_counter()
            with locked(self._lock, self._lock_wait_s):
                held = time.perf_counter()
                timeline = self.meta.timeline()
                inflight = _inflight_of(timeline, instant)
                check_conflicts(timeline, instant, rewritten_file_groups(stats))
                self._check_own_heartbeat(instant)
                completion = InstantTimeGenerator.next(timeline.max_time)
                self._lock.assert_held()  # a lock lost meanwhile (ZooKeeper session) must not publish
                transition_to_completed(timeline, inflight, completion, metadata.to_avro_bytes())
                published = time.perf_counter()
        except BaseException:
            # a commit that failed before its completed file exists is undone; one after it, never
            if self.meta.timeline().completed_instant(instant) is None:
                self.abort(instant)
            raise
        try:
            self._finish(instant)
        except Exception as e:  # the commit stands; leftover markers or heartbeats are harmless
            log.warning("instant %s committed, but cleaning its markers/heartbeat failed: %s", instant, e)
        return CommitResult(
            instant_time=instant,
            completion_time=completion,
            operation=pending.operation.value,
            num_writes=sum(s.num_writes or 0 for s in stats),
            num_inserts=sum(s.num_inserts or 0 for s in stats),
            num_updates=sum(s.num_update_writes or 0 for s in stats),
            num_deletes=sum(s.num_deletes or 0 for s in stats),
            files_written=len(stats),
            bytes_written=sum(s.total_write_bytes or 0 for s in stats),
            partitions=tuple(sorted(by_partition)),
            records=pending.records,
            lock_wait_ms=round((held - asked) * 1000, 3),
            lock_held_ms=round((published - held) * 1000, 3),
            durations_ms={**pending.durations_ms, "commit": round((published - committing) * 1000, 1)},
        )

    def _check_own_heartbeat(self, instant: str) -> None:
        """A writer that stalled past its heartbeat's expiry may already be rolled back by others."""
        if is_expired(
            self.meta.storage, instant, interval_ms=self.config.require(HEARTBEAT_INTERVAL_MS),
            tolerable_misses=self.config.require(HEARTBEAT_TOLERABLE_MISSES),
        ):
            raise HeartbeatExpiredError(
                f"the heartbeat of instant {instant} expired before its commit, so other writers may roll it "
                "back; the write is abandoned, retry it"
            )

    def abort(self, instant: str) -> None:
        """Undo a write that will not commit: its data files first, then its timeline files.

        A completed instant is never undone here: its files are the table's data now.
        """
        if self.meta.timeline().completed_instant(instant) is not None:
            raise TimelineError(f"instant {instant} is completed; it cannot be aborted", instant=instant)
        storage = self.meta.storage
        markers = WriteMarkers(storage, instant)
        for m in markers.all():
            storage.delete_file(m.data_file_path)
        markers.delete_all()
        delete_pending(self.meta.timeline(), instant)
        self._finish(instant)

    def _finish(self, instant: str) -> None:
        WriteMarkers(self.meta.storage, instant).delete_all()
        pending = self._pending.pop(instant, None)
        if pending is not None:
            pending.heartbeat.stop()

    @property
    def _lock_wait_s(self) -> float:
        return self.config.require(LOCK_WAIT_MS) / 1000

    # -- planning ----------------------------------------------------------------------------------

    def _job(
        self, timeline: Timeline, operation: WriteOperation, requested: Instant, input_schema: pa.Schema,
        started: float,
    ) -> WriteJob:
        """The write's planning pieces for input of `input_schema`; bad input fails here, on the driver."""
        is_delete = operation is WriteOperation.DELETE
        table_schema = self.meta.table_schema(timeline)
        if is_delete and table_schema is None:
            raise InvalidInputError("the table has no records yet, so there is nothing to delete")
        schema = table_schema if is_delete else write_schema(input_schema, table_schema, require_all=True)
        assert schema is not None
        self.keygen.check_columns(input_schema)
        event_time = self.merge_mode is MergeMode.EVENT_TIME_ORDERING and bool(self.ordering_field)
        if is_delete:  # keys only: the key and partition columns, cast to the table's types
            key_fields = dict.fromkeys((*self.keygen.record_key_fields, *self.keygen.partition_fields))
            cast_to = pa.schema([schema.field(f) if f in schema.names else input_schema.field(f) for f in key_fields])
        else:
            cast_to = schema
        ordering = self.ordering_field if event_time and not is_delete else None
        if ordering:
            check_ordering_field(input_schema, ordering)
        preparer = RecordPreparer(self.keygen, cast_to, keys_only=is_delete, ordering_field=ordering)
        pending = self._pending[requested.requested_time]
        pending.operation, pending.schema = operation, schema

        def begin(profile: CommitMetadata) -> None:
            pending.durations_ms["index_lookup"] = round((time.perf_counter() - started) * 1000, 1)
            transition_to_inflight(timeline, requested, profile.to_avro_bytes())
            pending.written = True
            pending.records = sum((s.num_inserts or 0) + (s.num_update_writes or 0) for s in profile.write_stats())

        c = self.config
        return WriteJob(
            operation=operation,
            instant=requested.requested_time,
            preparer=preparer,
            deduper=Deduper(ordering) if self._combine(operation) else None,
            shuffle_parallelism=c.require({
                WriteOperation.UPSERT: WriteConfig.UPSERT_PARALLELISM,
                WriteOperation.INSERT: WriteConfig.INSERT_PARALLELISM,
                WriteOperation.BULK_INSERT: WriteConfig.BULK_INSERT_PARALLELISM,
                WriteOperation.DELETE: WriteConfig.DELETE_PARALLELISM,
            }[operation]),
            context=self._context(requested.requested_time, schema),
            index_type=c.get(WriteConfig.INDEX_TYPE) or "SIMPLE",
            prune_by_ranges=bool(c.get(WriteConfig.BLOOM_PRUNE_BY_RANGES)),
            storage=self.meta.storage,
            scope=lambda partitions: WriteScope(
                self.meta.fs_view(timeline, partitions=partitions), timeline, operation, self._sizing(),
                requested.requested_time,
            ),
            begin=begin,
        )

    def _combine(self, operation: WriteOperation) -> bool:
        key = {
            WriteOperation.UPSERT: WriteConfig.COMBINE_BEFORE_UPSERT,
            WriteOperation.DELETE: WriteConfig.COMBINE_BEFORE_DELETE,
        }.get(operation, WriteConfig.COMBINE_BEFORE_INSERT)
        return bool(self.config.get(key))

    def _sizing(self) -> SizingRules:
        c = self.config
        return SizingRules(
            max_file_size=c.require(WriteConfig.PARQUET_MAX_FILE_SIZE),
            small_file_limit=c.require(WriteConfig.PARQUET_SMALL_FILE_LIMIT),
            record_size_estimate=c.require(WriteConfig.RECORD_SIZE_ESTIMATE),
            insert_split_size=c.require(WriteConfig.INSERT_SPLIT_SIZE),
            auto_split=bool(c.get(WriteConfig.AUTO_TUNE_INSERT_SPLITS)),
        )

    def _context(self, instant: str, schema: pa.Schema) -> WriteContext:
        c = self.config
        return WriteContext(
            base_path=self.meta.storage.uri,
            instant_time=instant,
            schema=schema,
            merge_mode=self.merge_mode,
            ordering_field=self.ordering_field,
            compression=(c.get(WriteConfig.PARQUET_COMPRESSION) or "GZIP").lower(),
            row_group_bytes=c.require(WriteConfig.PARQUET_BLOCK_SIZE),
            page_size=c.require(WriteConfig.PARQUET_PAGE_SIZE),
            bloom=BloomOptions(
                type_code=c.require(WriteConfig.BLOOM_FILTER_TYPE),
                num_entries=c.require(WriteConfig.BLOOM_NUM_ENTRIES),
                fpp=c.require(WriteConfig.BLOOM_FPP),
                max_entries=c.require(WriteConfig.BLOOM_DYNAMIC_MAX_ENTRIES),
            ),
        )


def _check_fixed_by_table(config: HoodieConfig, props: TableProperties) -> None:
    """Options that restate the table's own settings must agree with them (Hudi validates the same)."""
    if config.get(WriteConfig.METADATA_ENABLE):
        raise ConfigError(
            "hoodie.metadata.enable=true: hudi-ops does not maintain Hudi's metadata table, so writers "
            "that share a table with it run with hoodie.metadata.enable=false"
        )
    if not config.get(WriteConfig.POPULATE_META_FIELDS):
        raise ConfigError(
            "hoodie.populate.meta.fields=false (set on the table or the write): hudi-ops always writes the "
            "_hoodie_* meta fields, which incremental reads and conflict checks need"
        )
    if config.get(TableConfigKeys.DROP_PARTITION_COLUMNS):
        raise ConfigError(
            "hoodie.datasource.write.drop.partition.columns=true: hudi-ops keeps partition columns in the data "
            "files (hudi-rs cannot read tables that drop them)"
        )
    fixed = (
        (WriteConfig.TABLE_NAME, props.table_name),
        (WriteConfig.RECORD_KEY_FIELD, ",".join(props.record_key_fields)),
        (WriteConfig.PARTITION_PATH_FIELD, ",".join(props.partition_fields)),
        (WriteConfig.ORDERING_FIELD, props.ordering_field),
    )
    for key, table_value in fixed:
        raw = config.get(key)
        given = ",".join(raw) if isinstance(raw, tuple) else raw
        if given and given != (table_value or ""):
            raise ConfigError(
                f"{key.name}={given} differs from the table's {table_value or '(none)'}; "
                "it is fixed when the table is created, so drop the option or write to another table"
            )


def _validate(config: HoodieConfig) -> None:
    """Parse every known write key up front, so a bad value fails before any instant is started."""
    for key in (*vars(WriteConfig).values(), LOCK_WAIT_MS, HEARTBEAT_INTERVAL_MS, HEARTBEAT_TOLERABLE_MISSES):
        if isinstance(key, ConfigKey):
            config.get(key)


def _inflight_of(timeline: Timeline, instant: str) -> Instant:
    states = timeline.states_of(instant)
    if any(i.is_completed for i in states):
        raise TimelineError(f"instant {instant} is already completed", instant=instant)
    inflight = [i for i in states if i.state is State.INFLIGHT]
    if not inflight:
        raise TimelineError(
            f"instant {instant} has no inflight file: write data with it before committing", instant=instant
        )
    return inflight[0]

