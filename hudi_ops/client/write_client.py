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
from enum import Enum
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hudi_ops.client.engine_context import Engine
from hudi_ops.client.grouping import group_rows
from hudi_ops.client.handles import BloomOptions, WriteContext, WriteStatus, WriteTask, run_write_task
from hudi_ops.client.index import tag_locations
from hudi_ops.client.keygen import KeyGenerator
from hudi_ops.client.partitioner import InsertBucket, SizingRules, assign_inserts, average_record_size
from hudi_ops.client.precombine import MergeMode, check_ordering_values, dedupe_indices
from hudi_ops.client.write_schema import conform, write_schema
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
    InvalidTableError,
    TimelineError,
    WriteConflictError,
)
from hudi_ops.format.avro_schema import arrow_to_avro, schema_to_json
from hudi_ops.format.commit_metadata import CommitMetadata, WriteStat
from hudi_ops.format.file_group import BaseFile
from hudi_ops.format.file_names import new_file_id
from hudi_ops.format.fs_view import FileSystemView, has_committed_data
from hudi_ops.format.instant import Instant, InstantTimeGenerator, State
from hudi_ops.format.meta_client import MetaClient
from hudi_ops.format.meta_fields import RECORD_KEY
from hudi_ops.format.table_properties import TableProperties, check_writable_v8
from hudi_ops.format.timeline import Timeline
from hudi_ops.format.transitions import (
    create_requested,
    delete_pending,
    transition_to_completed,
    transition_to_inflight,
)

log = logging.getLogger(__name__)



class WriteOperation(Enum):
    """Hudi's WriteOperationType names, as recorded in commit metadata."""

    INSERT = "INSERT"
    UPSERT = "UPSERT"
    BULK_INSERT = "BULK_INSERT"
    DELETE = "DELETE"

    @classmethod
    def parse(cls, text: str) -> WriteOperation:
        try:
            return cls(text.strip().upper())
        except ValueError:
            raise InvalidInputError(
                f"operation {text!r} is not supported; use one of upsert, insert, bulk_insert, delete"
            ) from None


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

    def write(self, batch: pa.Table, instant: str, operation: WriteOperation) -> list[WriteStatus]:
        pending = self._pending.get(instant)
        if pending is None:
            raise TimelineError(
                f"instant {instant} was not started by this client; call start_commit()", instant=instant
            )
        timeline = self.meta.timeline()
        requested = [i for i in timeline.states_of(instant) if i.state is State.REQUESTED]
        if not requested or len(timeline.states_of(instant)) > 1:
            raise TimelineError(
                f"instant {instant} is not freshly requested; each instant takes exactly one write", instant=instant
            )
        if isinstance(batch, pa.RecordBatch):
            batch = pa.Table.from_batches([batch])
        plan = self._plan(batch, timeline, operation, instant)
        pending.operation, pending.schema = operation, plan.context_schema
        transition_to_inflight(timeline, requested[0], plan.workload_profile(operation).to_avro_bytes())
        pending.written = True
        ctx = self._context(instant, plan.context_schema)
        return self.engine.map(_TaskRunner(ctx), plan.tasks)

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
            lock_wait_ms=round((held - asked) * 1000, 3),
            lock_held_ms=round((published - held) * 1000, 3),
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

    def _plan(self, batch: pa.Table, timeline: Timeline, operation: WriteOperation, instant: str) -> _Plan:
        is_delete = operation is WriteOperation.DELETE
        table_schema = self.meta.table_schema(timeline)
        if is_delete and table_schema is None:
            raise InvalidInputError("the table has no records yet, so there is nothing to delete")
        schema = table_schema if is_delete else write_schema(batch.schema, table_schema, require_all=True)
        assert schema is not None
        self.keygen.check_columns(batch.schema)
        if not is_delete and self.merge_mode is MergeMode.EVENT_TIME_ORDERING and self.ordering_field:
            check_ordering_values(batch, self.ordering_field)
        if is_delete:  # keys only: cast the key and partition columns to the table's types
            key_fields = dict.fromkeys((*self.keygen.record_key_fields, *self.keygen.partition_fields))
            records = conform(batch, pa.schema([schema.field(f) if f in schema.names else batch.schema.field(f)
                                                for f in key_fields]))
        else:
            records = conform(batch, schema)
        keys = self.keygen.record_keys(records)
        partitions = self.keygen.partition_paths(records)
        if self._combine(operation) and records.num_rows:
            ordering = None
            if self.merge_mode is MergeMode.EVENT_TIME_ORDERING and self.ordering_field and not is_delete:
                ordering = records.column(self.ordering_field).combine_chunks()
            keep = pa.array(dedupe_indices(partitions, keys, ordering))
            records, keys, partitions = records.take(keep), pc.take(keys, keep), pc.take(partitions, keep)
        records = records.append_column(RECORD_KEY, keys) if not is_delete else pa.table({RECORD_KEY: keys})

        touched = sorted(set(partitions.to_pylist()))
        view = self.meta.fs_view(timeline, partitions=touched if touched else [])
        base_files = view.latest_base_files()
        if operation in (WriteOperation.UPSERT, WriteOperation.DELETE):
            located = tag_locations(
                self.meta.storage, base_files, partitions, keys,
                index_type=self.config.get(WriteConfig.INDEX_TYPE) or "SIMPLE",
                prune_by_ranges=bool(self.config.get(WriteConfig.BLOOM_PRUNE_BY_RANGES)),
            )
            targets = {f for f in located if f is not None}
            _refuse_pending_clustering(view, targets, instant)
            _refuse_unmergeable(view, targets)
        else:
            located = np.full(records.num_rows, None, dtype=object)
        # a file group that a pending compaction or clustering will rewrite takes no new inserts,
        # nor does one whose logs this writer cannot merge
        busy = {g.file_id for g in (*view.pending_clustering, *view.pending_compaction)} | _with_logs(view)
        packable = [b for b in base_files if b.file_id not in busy]
        planner = _Planner(self, timeline, base_files, packable, operation)
        return planner.plan(records, partitions, located, schema)

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


@dataclass(frozen=True)
class _Plan:
    tasks: list[WriteTask]
    context_schema: pa.Schema
    inserts: dict[str, int]  # partition -> records bound for new or small file groups
    updates: dict[str, tuple[str, str, int]]  # file id -> (partition, base instant, records it takes)

    def workload_profile(self, operation: WriteOperation) -> CommitMetadata:
        """The inflight file, as Spark writes it: per partition one `fileId ""` entry counting its
        inserts, and one entry per existing file group counting its updates."""
        stats: dict[str, list[WriteStat]] = {}
        for partition, n in sorted(self.inserts.items()):
            stats.setdefault(partition, []).append(WriteStat(file_id="", prev_commit="null", num_inserts=n))
        for fid, (partition, prev, n) in sorted(self.updates.items()):
            stats.setdefault(partition, []).append(WriteStat(file_id=fid, prev_commit=prev, num_update_writes=n))
        return CommitMetadata(
            partition_to_write_stats={p: tuple(v) for p, v in stats.items()},
            compacted=False, extra_metadata={}, version=None, operation_type=operation.value,
        )


@dataclass(frozen=True)
class _TaskRunner:
    """A picklable `task -> status` function for the engine."""

    ctx: WriteContext

    def __call__(self, task: WriteTask) -> WriteStatus:
        return run_write_task(self.ctx, task)


class _Planner:
    """Turns tagged records into one write task per file group."""

    def __init__(
        self, client: WriteClient, timeline: Timeline, base_files: list[BaseFile], packable: list[BaseFile],
        op: WriteOperation,
    ) -> None:
        self.client = client
        self.timeline = timeline
        self.base_files = {b.file_id: b for b in base_files}
        self.packable = packable
        self.op = op

    def plan(self, records: pa.Table, partitions: pa.Array, located: np.ndarray, schema: pa.Schema) -> _Plan:
        parts = partitions.to_numpy(zero_copy_only=False)
        located_rows = group_rows(located)
        groups: dict[str, list[np.ndarray]] = {str(fid): [rows] for fid, rows in located_rows.items()}
        inserts: list[InsertBucket] = []
        insert_rows: dict[str, np.ndarray] = {}
        if self.op is not WriteOperation.DELETE:
            sizing = self.client._sizing()
            avg = average_record_size(self.timeline, sizing)
            unlocated = parts.astype(object)
            unlocated[np.not_equal(located, None)] = None
            for p, rows in sorted(group_rows(unlocated).items(), key=lambda kv: str(kv[0])):
                p = str(p)
                insert_rows[p] = rows
                small = [b for b in self.packable if b.partition_path == p]
                inserts.extend(assign_inserts(
                    p, len(rows), small, avg_record_size=avg, rules=sizing,
                    use_small_files=self.op is not WriteOperation.BULK_INSERT,
                ))
        offsets = dict.fromkeys(insert_rows, 0)
        new_groups: list[tuple[str, str, np.ndarray]] = []
        for b in inserts:
            rows = insert_rows[b.partition_path][offsets[b.partition_path]:offsets[b.partition_path] + b.count]
            offsets[b.partition_path] += b.count
            if b.file_id is not None:
                groups.setdefault(b.file_id, []).append(rows)
            else:
                new_groups.append((b.partition_path, new_file_id(0), rows))
        tasks: list[WriteTask] = []
        match = self.op in (WriteOperation.UPSERT, WriteOperation.DELETE)
        for fid, chunks in sorted(groups.items()):
            rows = np.concatenate(chunks)
            base = self.base_files[fid]
            picked = records.take(pa.array(rows))
            tasks.append(WriteTask(
                partition_path=base.partition_path, file_id=fid, task_index=len(tasks),
                records=picked if self.op is not WriteOperation.DELETE else picked.slice(0, 0),
                delete_keys=picked.column(RECORD_KEY).combine_chunks() if self.op is WriteOperation.DELETE else None,
                base_file=base.path, prev_commit=base.instant_time, match_keys=match,
            ))
        for p, fid, rows in new_groups:
            tasks.append(
                WriteTask(partition_path=p, file_id=fid, task_index=len(tasks), records=records.take(pa.array(rows)))
            )
        updates = {
            str(fid): (self.base_files[str(fid)].partition_path, self.base_files[str(fid)].instant_time, len(rows))
            for fid, rows in located_rows.items()
        }
        return _Plan(tasks, schema, {p: len(r) for p, r in insert_rows.items()}, updates)


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


def _refuse_pending_clustering(view: FileSystemView, file_ids: set[str], instant: str) -> None:
    """Hudi refuses updates to file groups a pending clustering will replace: they would be lost."""
    hit = {g: t for g, t in view.pending_clustering.items() if g.file_id in file_ids}
    if hit:
        clustering = min(hit.values())
        raise WriteConflictError(
            instant, clustering, (str(g) for g in hit),
            reason=f"pending clustering {clustering} will replace them; retry after it completes",
        )


def _with_logs(view: FileSystemView) -> set[str]:
    """File groups whose latest slice has log files holding committed data."""
    holds_data = has_committed_data(view.timeline)
    return {s.file_id for s in view.latest_slices() if any(holds_data(lf) for lf in s.log_files)}


def _refuse_unmergeable(view: FileSystemView, file_ids: set[str]) -> None:
    """The writer rewrites base files only: updating a slice with logs (or one a pending compaction is
    about to rebuild) would drop the logs' updates."""
    compacting = {g.file_id for g in view.pending_compaction}
    stuck = sorted(file_ids & (_with_logs(view) | compacting))
    if stuck:
        raise InvalidTableError(
            f"file group(s) {', '.join(stuck)} have log files or a pending compaction, which this writer cannot "
            "merge yet; compact the table (or let its pending compaction finish) before updating these records"
        )


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

