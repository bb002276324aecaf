"""Per-file-group write handles: create a new base file, or merge records into an existing one.

A handle is a pure function of a `WriteContext` (the same for every task of one write) and a
`WriteTask` (one file group's records), so any engine can run handles wherever it likes: the
local engine calls them in-process, the Spark engine on executors. Each returns a `WriteStatus`.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from functools import cached_property

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hudi_ops.client.precombine import MergeMode, dedupe_indices, deleted_mask, incoming_wins
from hudi_ops.concurrency.markers import IOType, WriteMarkers
from hudi_ops.format.base_file import read_base_file, write_base_file
from hudi_ops.format.bloom import bloom_filter_from_config
from hudi_ops.format.commit_metadata import RuntimeStats, WriteStat
from hudi_ops.format.file_group import in_partition
from hudi_ops.format.file_names import BaseFileName, WriteToken
from hudi_ops.format.meta_fields import (
    COMMIT_SEQNO,
    COMMIT_TIME,
    FILE_NAME,
    META_FIELDS,
    PARTITION_PATH,
    RECORD_KEY,
    with_meta_schema,
)
from hudi_ops.format.partition_metadata import write_partition_metadata
from hudi_ops.format.schema_align import align
from hudi_ops.storage import Storage


@dataclass(frozen=True)
class BloomOptions:
    type_code: str = "DYNAMIC_V0"
    num_entries: int = 60000
    fpp: float = 0.000000001
    max_entries: int = 100000


@dataclass(frozen=True)
class WriteContext:
    """What every task of one write shares."""

    base_path: str
    instant_time: str
    schema: pa.Schema  # the user columns, which every written file gets
    merge_mode: MergeMode
    ordering_field: str | None
    compression: str = "gzip"
    row_group_bytes: int = 120 * 1024 * 1024
    page_size: int = 1024 * 1024
    bloom: BloomOptions = BloomOptions()

    @cached_property
    def storage(self) -> Storage:
        # made where the task runs (a Spark executor gets the path, not a file-system handle), once
        return Storage.for_uri(self.base_path)


@dataclass(frozen=True)
class WriteTask:
    """The records one file group receives in one write.

    `records` holds the user columns plus `_hoodie_record_key`; `delete_keys` are keys to remove;
    `base_file` is the current base file to merge into, or None for a new file group.
    """

    partition_path: str
    file_id: str
    task_index: int
    records: pa.Table
    delete_keys: pa.Array | None = None
    base_file: str | None = None
    prev_commit: str = "null"
    match_keys: bool = True  # False for insert/bulk_insert: records are appended, never matched


@dataclass(frozen=True)
class WriteStatus:
    """The outcome of one task: the written file's statistics, as they go into the commit metadata."""

    stat: WriteStat

    @property
    def partition_path(self) -> str:
        return self.stat.partition_path or ""

    @property
    def file_id(self) -> str:
        return self.stat.file_id or ""


def run_write_task(ctx: WriteContext, task: WriteTask) -> WriteStatus:
    """Run the task's handle; its runtime stats get the handle's time as Hudi's handles record it
    (totalCreateTime or totalUpsertTime, and totalScanTime for reading the base file), in ms."""
    started = time.perf_counter()
    status = _merge(ctx, task) if task.base_file else _create(ctx, task)
    took = round((time.perf_counter() - started) * 1000)
    stats = status.stat.runtime_stats or RuntimeStats()
    stats = replace(stats, total_upsert_time=took) if task.base_file else replace(stats, total_create_time=took)
    return WriteStatus(replace(status.stat, runtime_stats=stats))


def _new_name(ctx: WriteContext, task: WriteTask) -> BaseFileName:
    return BaseFileName(task.file_id, str(WriteToken(task.task_index, 0, 0)), ctx.instant_time)


def _with_meta(ctx: WriteContext, task: WriteTask, rows: pa.Table, file_name: str) -> pa.Table:
    """Stamp new records with this instant's meta fields, in Hudi's column order."""
    n = rows.num_rows
    if n == 0:  # e.g. a delete, which brings keys only
        return with_meta_schema(ctx.schema).empty_table()
    seq = pc.binary_join_element_wise(
        f"{ctx.instant_time}_{task.task_index}_", pc.cast(pa.array(np.arange(n, dtype=np.int64)), pa.string()), ""
    )
    meta = {
        COMMIT_TIME: pa.array([ctx.instant_time] * n, pa.string()),
        COMMIT_SEQNO: seq,
        RECORD_KEY: rows.column(RECORD_KEY),
        PARTITION_PATH: pa.array([task.partition_path] * n, pa.string()),
        FILE_NAME: pa.array([file_name] * n, pa.string()),
    }
    cols = [meta[f] for f in META_FIELDS] + [rows.column(f.name) for f in ctx.schema]
    return pa.Table.from_arrays(cols, schema=with_meta_schema(ctx.schema))


def _write(ctx: WriteContext, task: WriteTask, name: BaseFileName, table: pa.Table, io: IOType) -> WriteStat:
    storage = ctx.storage
    write_partition_metadata(storage, task.partition_path, ctx.instant_time)
    WriteMarkers(storage, ctx.instant_time).create(task.partition_path, name.file_name, io)
    b = ctx.bloom
    written = write_base_file(
        storage,
        in_partition(task.partition_path, name.file_name),
        table,
        bloom=bloom_filter_from_config(b.num_entries, b.fpp, b.max_entries, b.type_code),
        compression=ctx.compression,
        row_group_bytes=ctx.row_group_bytes,
        page_size=ctx.page_size,
    )
    return WriteStat(
        file_id=task.file_id,
        path=written.path,
        prev_commit=task.prev_commit,
        num_writes=written.num_rows,
        total_write_bytes=written.size_bytes,
        file_size_in_bytes=written.size_bytes,
        partition_path=task.partition_path,
        runtime_stats=RuntimeStats(),
    )


def _create(ctx: WriteContext, task: WriteTask) -> WriteStatus:
    rows = task.records.filter(pa.array(~deleted_mask(task.records)))
    name = _new_name(ctx, task)
    stat = _write(ctx, task, name, _with_meta(ctx, task, rows, name.file_name), IOType.CREATE)
    return WriteStatus(replace(stat, num_inserts=rows.num_rows))


def _merge(ctx: WriteContext, task: WriteTask) -> WriteStatus:
    assert task.base_file is not None
    scan_started = time.perf_counter()
    old = align(read_base_file(ctx.storage, task.base_file), with_meta_schema(ctx.schema))
    scan_ms = round((time.perf_counter() - scan_started) * 1000)
    name = _new_name(ctx, task)
    old_keys = old.column(RECORD_KEY)
    incoming = task.records
    if task.match_keys and incoming.num_rows > 1:
        # without precombine a key can arrive twice; like Hudi's merge handle, the last one is merged
        incoming = incoming.take(pa.array(dedupe_indices(None, incoming.column(RECORD_KEY).combine_chunks(), None)))
    n_old, n_new = old.num_rows, incoming.num_rows
    soft_deleted = deleted_mask(incoming)
    take = np.arange(n_old, dtype=np.int64)
    keep = np.ones(n_old, dtype=bool)
    matched_new = np.zeros(n_new, dtype=bool)
    replaced = np.zeros(n_old, dtype=bool)
    if task.match_keys and n_new:
        # for every stored row, the incoming record with its key (if any) and whether that record wins
        j = pc.index_in(old_keys, value_set=incoming.column(RECORD_KEY))
        has = pc.is_valid(j).to_numpy(zero_copy_only=False)
        old_idx = np.nonzero(has)[0]
        new_idx = pc.drop_null(j).to_numpy(zero_copy_only=False).astype(np.int64)
        matched_new[new_idx] = True
        wins = np.ones(len(old_idx), dtype=bool)
        if ctx.merge_mode is MergeMode.EVENT_TIME_ORDERING and ctx.ordering_field and len(old_idx):
            stored_ord = pc.take(old.column(ctx.ordering_field), pa.array(old_idx)).combine_chunks()
            new_ord = pc.take(incoming.column(ctx.ordering_field), pa.array(new_idx)).combine_chunks()
            wins = incoming_wins(stored_ord, new_ord, True)
        take[old_idx[wins]] = n_old + new_idx[wins]
        replaced[old_idx[wins]] = True
        keep[old_idx[wins][soft_deleted[new_idx[wins]]]] = False
    deletes = int((replaced & ~keep).sum())
    if task.delete_keys is not None and len(task.delete_keys):
        gone = pc.is_in(old_keys, value_set=task.delete_keys).to_numpy(zero_copy_only=False) & keep
        deletes += int(gone.sum())
        keep &= ~gone
    inserts = np.nonzero(~matched_new & ~soft_deleted)[0]

    new_rows = _with_meta(ctx, task, incoming, name.file_name)
    combined = pa.concat_tables([old, new_rows])
    order = np.concatenate([take[keep], n_old + inserts])
    out = combined.take(pa.array(order))
    out = out.set_column(out.schema.get_field_index(FILE_NAME), FILE_NAME, pa.array([name.file_name] * len(order)))
    stat = _write(ctx, task, name, out, IOType.MERGE)
    updates = int((replaced & keep).sum())
    return WriteStatus(replace(
        stat,
        num_update_writes=updates,
        num_inserts=len(inserts),
        num_deletes=deletes,
        prev_base_file=task.base_file.rsplit("/", 1)[-1],
        runtime_stats=RuntimeStats(total_scan_time=scan_ms),
    ))
