"""Where inserts go: into small existing files first, then into new file groups of bounded size.

Hudi's UpsertPartitioner rule: a latest base file smaller than `hoodie.parquet.small.file.limit`
takes inserts until it would reach `hoodie.parquet.max.file.size`; the rest is split into new file
groups of `max file size / average record size` records (or `hoodie.copyonwrite.insert.split.size`
when auto-split is off). The average record size comes from the latest commit that wrote more
than the small-file limit, else `hoodie.copyonwrite.record.size.estimate`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from hudi_ops.format.file_group import BaseFile
from hudi_ops.format.timeline import Timeline


@dataclass(frozen=True, slots=True)
class SizingRules:
    max_file_size: int
    small_file_limit: int
    record_size_estimate: int
    insert_split_size: int
    auto_split: bool = True


@dataclass(frozen=True, slots=True)
class InsertBucket:
    """`count` inserts of one partition routed to an existing small file (`file_id`) or a new group."""

    partition_path: str
    count: int
    file_id: str | None = None


def average_record_size(timeline: Timeline, rules: SizingRules) -> int:
    threshold = rules.small_file_limit
    for inst in sorted(timeline.completed_writes(), key=timeline.completion_time, reverse=True):
        meta = timeline.commit_metadata(inst)
        total_bytes = sum(s.total_write_bytes or 0 for s in meta.write_stats())
        total_records = sum(s.num_writes or 0 for s in meta.write_stats())
        if total_bytes > threshold and total_records > 0:
            return max(1, math.ceil(total_bytes / total_records))
    return rules.record_size_estimate


def assign_inserts(
    partition_path: str,
    num_inserts: int,
    small_files: Sequence[BaseFile],
    *,
    avg_record_size: int,
    rules: SizingRules,
    use_small_files: bool = True,
) -> list[InsertBucket]:
    buckets: list[InsertBucket] = []
    left = num_inserts
    if use_small_files:
        for f in sorted(small_files, key=lambda b: b.size):
            if left <= 0:
                break
            if f.size >= rules.small_file_limit:
                continue
            room = (rules.max_file_size - f.size) // avg_record_size
            take = min(left, room)
            if take > 0:
                buckets.append(InsertBucket(partition_path, take, f.file_id))
                left -= take
    if left > 0:
        per_bucket = max(1, rules.max_file_size // avg_record_size) if rules.auto_split else rules.insert_split_size
        n = math.ceil(left / per_bucket)
        base, extra = divmod(left, n)
        buckets.extend(InsertBucket(partition_path, base + (1 if i < extra else 0)) for i in range(n))
    return buckets
