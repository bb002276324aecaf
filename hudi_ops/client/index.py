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
            hit = keys_in_file(storage, f.path, keys, bloom=index_type == "BLOOM", prune_by_ranges=prune_by_ranges)
            located[rows[hit]] = f.file_id
    return located


def keys_in_file(
    storage: Storage, path: str, keys: pa.Array, *, bloom: bool, prune_by_ranges: bool = False
) -> np.ndarray:
    """Which of `keys` the base file at `path` holds. With `bloom`, only keys that pass the footer's
    key range (if `prune_by_ranges`) and bloom filter are looked up in the file (HoodieKeyLookupHandle)."""
    candidates = np.ones(len(keys), dtype=bool)
    if bloom:
        footer = read_footer(storage, path)
        if prune_by_ranges:
            candidates &= key_range_mask(keys, footer.min_record_key, footer.max_record_key)
        filter_ = footer.bloom_filter()
        if filter_ is not None and candidates.any():
            idx = np.nonzero(candidates)[0]
            candidates[idx] = filter_.might_contain_all(pc.take(keys, pa.array(idx)))
    if not candidates.any():
        return candidates
    stored = read_record_keys(storage, path)
    return pc.is_in(keys, value_set=stored).to_numpy(zero_copy_only=False) & candidates


def key_range_mask(keys: pa.Array, min_key: str | None, max_key: str | None) -> np.ndarray:
    """Keys within a file's [min, max] key range; all of them when the range is unknown or not comparable."""
    # the footer's range is in Java string order, which matches Arrow's byte order for ASCII keys only
    if min_key is None or max_key is None or pc.all(pc.string_is_ascii(keys)).as_py() is False:
        return np.ones(len(keys), dtype=bool)
    return pc.and_(pc.greater_equal(keys, min_key), pc.less_equal(keys, max_key)).to_numpy(zero_copy_only=False)
