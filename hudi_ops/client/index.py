"""Index: where each incoming record key already lives (its file group), if anywhere.

SIMPLE reads the record keys of every latest base file in the affected partitions; BLOOM first
prunes base files by their footer's key range and bloom filter and reads keys only of candidates.
Both are partition-scoped (a key is unique within its partition), like Hudi's non-global indexes.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hudi_ops.client.grouping import group_rows
from hudi_ops.format.base_file import read_footer, read_record_keys
from hudi_ops.format.file_group import BaseFile
from hudi_ops.storage import Storage


def tag_locations(
    storage: Storage,
    base_files: Sequence[BaseFile],
    partition_paths: pa.Array,
    record_keys: pa.Array,
    *,
    index_type: str = "SIMPLE",
    prune_by_ranges: bool = True,
) -> np.ndarray:
    """For each record, the file id holding its key in the same partition, or None (an insert)."""
    located = np.full(len(record_keys), None, dtype=object)
    by_partition: dict[str, list[BaseFile]] = {}
    for b in base_files:
        by_partition.setdefault(b.partition_path, []).append(b)
    if not by_partition or len(record_keys) == 0:
        return located
    rows_of = group_rows(partition_paths.to_numpy(zero_copy_only=False))
    for partition, files in by_partition.items():
        rows = rows_of.get(partition)
        if rows is None:
            continue
        keys = pc.take(record_keys, pa.array(rows))
        for f in files:
            if index_type == "BLOOM":
                candidates = _bloom_candidates(storage, f, keys, prune_by_ranges)
            else:
                candidates = np.ones(len(rows), dtype=bool)
            if not candidates.any():
                continue
            stored = read_record_keys(storage, f.path)
            hit = pc.is_in(keys, value_set=stored).to_numpy(zero_copy_only=False) & candidates
            located[rows[hit]] = f.file_id
    return located


def _bloom_candidates(storage: Storage, f: BaseFile, keys: pa.Array, prune_by_ranges: bool) -> np.ndarray:
    footer = read_footer(storage, f.path)
    mask = np.ones(len(keys), dtype=bool)
    # the footer's range is in Java string order, which matches Arrow's byte order for ASCII keys
    ascii_keys = pc.all(pc.string_is_ascii(keys)).as_py() is not False
    if prune_by_ranges and footer.min_record_key is not None and footer.max_record_key is not None and ascii_keys:
        in_range = pc.and_(
            pc.greater_equal(keys, footer.min_record_key), pc.less_equal(keys, footer.max_record_key)
        )
        mask &= in_range.to_numpy(zero_copy_only=False)
    bloom = footer.bloom_filter()
    if bloom is not None and mask.any():
        idx = np.nonzero(mask)[0]
        mask[idx] = bloom.might_contain_all(pc.take(keys, pa.array(idx)))
    return mask
