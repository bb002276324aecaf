"""Planning a write of one Arrow table in memory: tag, assign inserts, cut one task per file group.

Both engines use it for Arrow input (the rows are on the driver already); the Spark engine plans
DataFrames with the same `WriteJob` pieces, distributed.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hudi_ops.client.grouping import group_rows
from hudi_ops.client.handles import WriteTask
from hudi_ops.client.index import tag_locations
from hudi_ops.client.write_job import WriteJob
from hudi_ops.client.write_operation import WriteOperation
from hudi_ops.format.meta_fields import PARTITION_PATH, RECORD_KEY


def plan_in_memory(job: WriteJob, batch: pa.Table) -> list[WriteTask]:
    """The write's tasks; the inflight workload profile is written (`job.begin`) before returning."""
    prepared = job.preparer(batch)
    if job.deduper is not None:
        prepared = job.deduper(prepared)
    partitions = prepared.column(PARTITION_PATH).combine_chunks()
    keys = prepared.column(RECORD_KEY).combine_chunks()
    scope = job.scope(sorted(pc.unique(partitions).to_pylist()))
    if scope.needs_index:
        located = tag_locations(
            job.storage, list(scope.base_files.values()), partitions, keys,
            index_type=job.index_type, prune_by_ranges=job.prune_by_ranges,
        )
    else:
        located = np.full(prepared.num_rows, None, dtype=object)
    updated = {str(fid): rows for fid, rows in group_rows(located).items()}
    scope.check_updates(updated)

    insert_rows: dict[str, np.ndarray] = {}
    if job.operation is not WriteOperation.DELETE:
        unlocated = partitions.to_numpy(zero_copy_only=False).astype(object)
        unlocated[np.not_equal(located, None)] = None
        insert_rows = {str(p): rows for p, rows in group_rows(unlocated).items()}
    buckets = scope.insert_buckets({p: len(rows) for p, rows in insert_rows.items()})
    rows_of: dict[str, list[np.ndarray]] = {fid: [rows] for fid, rows in updated.items()}
    taken = dict.fromkeys(insert_rows, 0)
    for b in buckets:  # each partition's insert rows, in order, cut into its buckets
        start = taken[b.partition_path]
        rows_of.setdefault(str(b.file_id), []).append(insert_rows[b.partition_path][start:start + b.count])
        taken[b.partition_path] = start + b.count

    job.begin(job.workload_profile(
        {p: len(rows) for p, rows in insert_rows.items()},
        scope.updates_profile({fid: len(rows) for fid, rows in updated.items()}),
    ))
    writes = scope.file_group_writes(updated, buckets)
    return [w.task(prepared.take(pa.array(np.concatenate(rows_of[fid]))), job.operation) for fid, w in writes.items()]
