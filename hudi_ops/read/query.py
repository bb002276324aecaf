"""Queries over a table: snapshot (optionally as of an instant), read-optimized and incremental."""

from __future__ import annotations

from collections.abc import Sequence

import pyarrow as pa
import pyarrow.compute as pc

from hudi_ops.errors import InvalidInputError
from hudi_ops.format.file_group import BaseFile
from hudi_ops.format.fs_view import FileSystemView, has_committed_data
from hudi_ops.format.instant import normalize_instant_time
from hudi_ops.format.meta_client import MetaClient
from hudi_ops.format.meta_fields import COMMIT_TIME, with_meta_schema
from hudi_ops.format.partition_path import partition_values
from hudi_ops.format.timeline import Timeline
from hudi_ops.read.base_reader import read_base_files
from hudi_ops.read.filters import Filter, check, keep_partition


def snapshot(
    meta: MetaClient,
    *,
    as_of: str | None = None,
    columns: Sequence[str] | None = None,
    filters: Sequence[Filter] = (),
    read_optimized: bool = False,
) -> pa.Table:
    """The table's rows at its latest commit, or as of the instant `as_of` (compared with requested times)."""
    timeline = meta.timeline()
    point = normalize_instant_time(as_of) if as_of is not None else None
    schema = _schema(meta, timeline.filter(until=point) if point else timeline, columns, filters)
    view = meta.fs_view(timeline, as_of=point)
    files = _files(meta, view, read_optimized)
    files = _pruned(meta, files, filters, schema)
    return read_base_files(meta.storage, files, schema, columns=columns, filters=filters)


def incremental(
    meta: MetaClient,
    begin: str,
    end: str | None = None,
    *,
    columns: Sequence[str] | None = None,
    filters: Sequence[Filter] = (),
) -> pa.Table:
    """Records written by commits that completed in (begin, end], in their state at `end`.

    Table version 8+ orders commits by completion time (Hudi 1.x and hudi-rs); version 6 by instant time.
    Deleted records produce no rows.
    """
    if not meta.properties.populate_meta_fields:
        raise InvalidInputError(
            "incremental queries need the _hoodie_commit_time meta field, and this table is written with "
            "hoodie.populate.meta.fields=false; read snapshots (optionally as of an instant) instead"
        )
    timeline = meta.timeline()
    lo = normalize_instant_time(begin)
    hi = normalize_instant_time(end) if end is not None else None
    in_range = [
        i for i in timeline.completed_writes()
        if timeline.completion_time(i) > lo and (hi is None or timeline.completion_time(i) <= hi)
    ]
    commit_times = sorted(i.requested_time for i in in_range)
    upto = _until_completion(timeline, hi)
    schema = _schema(meta, upto, columns, filters)
    if not commit_times:
        return read_base_files(meta.storage, [], schema, columns=columns)
    view = FileSystemView.build(meta.storage, upto)
    wanted = set(commit_times)
    files = [b for b in _files(meta, view, read_optimized=False) if b.instant_time in wanted]
    return read_base_files(
        meta.storage, _pruned(meta, files, filters, schema), schema, columns=columns, filters=filters,
        row_filter=pc.field(COMMIT_TIME).isin(pa.array(commit_times, pa.string())),
    )


def _until_completion(timeline: Timeline, end: str | None) -> Timeline:
    """The timeline as it stood when `end` completed: later completions are dropped."""
    if end is None:
        return timeline
    kept = tuple(i for i in timeline.instants if not i.is_completed or timeline.completion_time(i) <= end)
    return Timeline(timeline.storage, timeline.folder, timeline.layout_version, kept)


def _schema(
    meta: MetaClient, timeline: Timeline, columns: Sequence[str] | None, filters: Sequence[Filter]
) -> pa.Schema:
    data = meta.table_schema(timeline) or meta.table_schema()
    full = with_meta_schema(data if data is not None else pa.schema([]))
    check(filters, full)
    for c in columns or ():
        if full.get_field_index(c) < 0:
            raise InvalidInputError(f"column {c!r} is not in the table (columns: {', '.join(full.names)})")
    return full


def _files(meta: MetaClient, view: FileSystemView, read_optimized: bool) -> list[BaseFile]:
    if read_optimized or not meta.is_mor:
        return view.latest_base_files()
    holds_data = has_committed_data(view.timeline)
    with_logs = [s for s in view.latest_slices() if any(holds_data(lf) for lf in s.log_files)]
    if with_logs:
        raise InvalidInputError(
            f"{len(with_logs)} file slice(s) of this MERGE_ON_READ table have log files, which this reader "
            "does not merge yet; read with read_optimized=True (base files only) or compact the table first"
        )
    return view.latest_base_files()


def _pruned(meta: MetaClient, files: list[BaseFile], filters: Sequence[Filter], schema: pa.Schema) -> list[BaseFile]:
    fields = meta.properties.partition_fields
    # only SIMPLE and COMPLEX generators put the column's own value in the path; others format it
    if not filters or not fields or meta.properties.keygen_type not in ("SIMPLE", "COMPLEX"):
        return files
    props = meta.properties
    kept = []
    for f in files:
        values = partition_values(
            f.partition_path, fields,
            hive_style=props.hive_style_partitioning, url_encoded=props.url_encode_partitioning,
        )
        if values is None or keep_partition(values, filters, schema):
            kept.append(f)
    return kept
