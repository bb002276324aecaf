"""One write's planning pieces, shared by every engine (Hudi's BaseWriteHelper steps, engine-free).

An engine plans a write with these, over its own kind of data: the local planner over one Arrow
table in memory, the Spark engine over a DataFrame. `RecordPreparer` and `Deduper` are picklable
and run next to the data; `WriteScope` (which files the write may touch) and `WriteJob.begin`
(the inflight workload profile) run on the driver, between tagging and writing.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

import pyarrow as pa

from hudi_ops.client.handles import WriteContext, WriteStatus, WriteTask, run_write_task
from hudi_ops.client.keygen import KeyGenerator
from hudi_ops.client.partitioner import InsertBucket, SizingRules, assign_inserts, average_record_size
from hudi_ops.client.precombine import check_ordering_values, dedupe_indices
from hudi_ops.client.write_operation import WriteOperation
from hudi_ops.client.write_schema import conform
from hudi_ops.errors import InvalidTableError, WriteConflictError
from hudi_ops.format.commit_metadata import CommitMetadata, WriteStat
from hudi_ops.format.file_group import BaseFile
from hudi_ops.format.file_names import new_file_id
from hudi_ops.format.fs_view import FileSystemView, has_committed_data
from hudi_ops.format.meta_fields import PARTITION_PATH, RECORD_KEY
from hudi_ops.format.timeline import Timeline
from hudi_ops.storage import Storage

#: the planning columns a prepared record carries besides the write's columns
PLANNING_COLUMNS = (RECORD_KEY, PARTITION_PATH)


@dataclass(frozen=True)
class RecordPreparer:
    """Input rows -> prepared records: the write's columns cast to its schema, then the record key and
    the partition path. A delete keeps the keys only."""

    keygen: KeyGenerator
    schema: pa.Schema  # what the input is cast to (for a delete: its key and partition fields)
    keys_only: bool = False
    ordering_field: str | None = None  # checked non-null: event-time ordering needs a value everywhere

    @property
    def output_schema(self) -> pa.Schema:
        user = [] if self.keys_only else list(self.schema)
        return pa.schema([*user, pa.field(RECORD_KEY, pa.string()), pa.field(PARTITION_PATH, pa.string())])

    def __call__(self, batch: pa.Table) -> pa.Table:
        if self.ordering_field:
            check_ordering_values(batch, self.ordering_field)
        records = conform(batch, self.schema)
        keys, partitions = self.keygen.record_keys(records), self.keygen.partition_paths(records)
        columns = [] if self.keys_only else list(records.columns)
        return pa.Table.from_arrays([*columns, keys, partitions], schema=self.output_schema)


@dataclass(frozen=True)
class Deduper:
    """Precombine: one record per (partition, key), the winner under the table's merge rule.

    Ties go to the later row, so engines hand rows over in input order."""

    ordering_field: str | None  # None: commit-time ordering (the last row wins)

    def __call__(self, prepared: pa.Table) -> pa.Table:
        if prepared.num_rows == 0:
            return prepared
        ordering = prepared.column(self.ordering_field).combine_chunks() if self.ordering_field else None
        keep = dedupe_indices(
            prepared.column(PARTITION_PATH).combine_chunks(), prepared.column(RECORD_KEY).combine_chunks(), ordering
        )
        return prepared.take(pa.array(keep))


@dataclass(frozen=True)
class FileGroupWrite:
    """Where one task writes: an existing file group (with its base file) or a new one."""

    partition_path: str
    file_id: str
    task_index: int
    base_file: str | None = None
    prev_commit: str = "null"

    def task(self, prepared: pa.Table, operation: WriteOperation) -> WriteTask:
        """The task for this file group's prepared records (planning columns may still be attached)."""
        records = prepared.drop_columns([PARTITION_PATH]) if PARTITION_PATH in prepared.column_names else prepared
        is_delete = operation is WriteOperation.DELETE
        return WriteTask(
            partition_path=self.partition_path, file_id=self.file_id, task_index=self.task_index,
            records=records.slice(0, 0) if is_delete else records,
            delete_keys=records.column(RECORD_KEY).combine_chunks() if is_delete else None,
            base_file=self.base_file, prev_commit=self.prev_commit,
            match_keys=self.base_file is not None and operation in (WriteOperation.UPSERT, WriteOperation.DELETE),
        )


@dataclass(frozen=True)
class TaskRunner:
    """A picklable `task -> status` function for the engine."""

    ctx: WriteContext

    def __call__(self, task: WriteTask) -> WriteStatus:
        return run_write_task(self.ctx, task)


@dataclass
class WriteScope:
    """The latest file groups of the partitions a write touches, and what may happen to them."""

    view: FileSystemView
    timeline: Timeline
    operation: WriteOperation
    sizing: SizingRules
    instant: str
    base_files: dict[str, BaseFile] = field(init=False)
    packable: list[BaseFile] = field(init=False)

    def __post_init__(self) -> None:
        self.base_files = {b.file_id: b for b in self.view.latest_base_files()}
        # a file group that a pending compaction or clustering will rewrite takes no new inserts,
        # nor does one whose logs this writer cannot merge
        busy = {g.file_id for g in (*self.view.pending_clustering, *self.view.pending_compaction)}
        busy |= _with_logs(self.view)
        self.packable = [b for b in self.base_files.values() if b.file_id not in busy]

    @property
    def needs_index(self) -> bool:
        return self.operation in (WriteOperation.UPSERT, WriteOperation.DELETE) and bool(self.base_files)

    def check_updates(self, file_ids: Iterable[str]) -> None:
        targets = set(file_ids)
        _refuse_pending_clustering(self.view, targets, self.instant)
        _refuse_unmergeable(self.view, targets)

    def insert_buckets(self, inserts: Mapping[str, int]) -> list[InsertBucket]:
        """Hudi's UpsertPartitioner: each partition's inserts go to its small files, then to new file
        groups; buckets for new groups get their file ids here."""
        if self.operation is WriteOperation.DELETE:
            return []
        avg = average_record_size(self.timeline, self.sizing)
        buckets: list[InsertBucket] = []
        for partition, n in sorted(inserts.items()):
            small = [b for b in self.packable if b.partition_path == partition]
            for b in assign_inserts(partition, n, small, avg_record_size=avg, rules=self.sizing,
                                    use_small_files=self.operation is not WriteOperation.BULK_INSERT):
                buckets.append(b if b.file_id is not None else InsertBucket(partition, b.count, new_file_id(0)))
        return buckets

    def file_group_writes(self, file_ids: Iterable[str], buckets: Iterable[InsertBucket]) -> dict[str, FileGroupWrite]:
        """One write per file group: existing groups (updated, or packed with inserts) first, then new ones."""
        existing = sorted({*file_ids, *(b.file_id for b in buckets if b.file_id in self.base_files)})
        fresh = [b for b in buckets if b.file_id not in self.base_files]
        writes: dict[str, FileGroupWrite] = {}
        for fid in existing:
            base = self.base_files[fid]
            writes[fid] = FileGroupWrite(base.partition_path, fid, len(writes), base.path, base.instant_time)
        for b in fresh:
            assert b.file_id is not None
            writes[b.file_id] = FileGroupWrite(b.partition_path, b.file_id, len(writes))
        return writes

    def updates_profile(self, updates: Mapping[str, int]) -> dict[str, tuple[str, str, int]]:
        return {
            fid: (self.base_files[fid].partition_path, self.base_files[fid].instant_time, n)
            for fid, n in updates.items()
        }


@dataclass
class WriteJob:
    """What an engine needs to plan and run one write of instant `instant`."""

    operation: WriteOperation
    instant: str
    preparer: RecordPreparer
    deduper: Deduper | None  # None when the write does not precombine
    shuffle_parallelism: int  # 0: the engine picks (distributed engines: the input's partition count)
    context: WriteContext
    index_type: str
    prune_by_ranges: bool
    storage: Storage
    #: builds the scope for the touched partitions (reads the file-system view)
    scope: Callable[[list[str]], WriteScope]
    #: writes the inflight file with the workload profile; data files may follow
    begin: Callable[[CommitMetadata], None]

    @property
    def schema(self) -> pa.Schema:
        return self.context.schema

    @property
    def runner(self) -> TaskRunner:
        return TaskRunner(self.context)

    def workload_profile(
        self, inserts: Mapping[str, int], updates: Mapping[str, tuple[str, str, int]]
    ) -> CommitMetadata:
        """The inflight file, as Spark writes it: per partition one `fileId ""` entry counting its
        inserts, and one entry per existing file group counting its updates."""
        stats: dict[str, list[WriteStat]] = {}
        for partition, n in sorted(inserts.items()):
            stats.setdefault(partition, []).append(WriteStat(file_id="", prev_commit="null", num_inserts=n))
        for fid, (partition, prev, n) in sorted(updates.items()):
            stats.setdefault(partition, []).append(WriteStat(file_id=fid, prev_commit=prev, num_update_writes=n))
        return CommitMetadata(
            partition_to_write_stats={p: tuple(v) for p, v in stats.items()},
            compacted=False, extra_metadata={}, version=None, operation_type=self.operation.value,
        )


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
