"""Which record wins: precombine within a batch and merge against stored records.

EVENT_TIME_ORDERING keeps the record with the greatest ordering value (ties go to the newer
record, as Hudi's DefaultHoodieRecordPayload does); COMMIT_TIME_ORDERING keeps the newest record.
"""

from __future__ import annotations

from enum import Enum

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hudi_ops.errors import InvalidInputError, InvalidTableError

IS_DELETED_FIELD = "_hoodie_is_deleted"


class MergeMode(Enum):
    EVENT_TIME_ORDERING = "EVENT_TIME_ORDERING"
    COMMIT_TIME_ORDERING = "COMMIT_TIME_ORDERING"

    @classmethod
    def of_table(cls, mode: str) -> MergeMode:
        """The table's merge mode (hoodie.properties, or what Hudi infers from it)."""
        try:
            return cls(mode.upper())
        except ValueError:
            raise InvalidTableError(
                f"the table merges records with hoodie.record.merge.mode={mode} (a custom payload or merger), "
                "which the hudi-ops writer cannot apply; only EVENT_TIME_ORDERING and COMMIT_TIME_ORDERING tables "
                "can be written"
            ) from None


def check_ordering_field(schema: pa.Schema, ordering_field: str) -> None:
    if schema.get_field_index(ordering_field) < 0:
        raise InvalidInputError(
            f"ordering field {ordering_field!r} is not a column of the input; this table merges by event "
            "time, which is fixed when a table is created, so every write must carry the field"
        )


def check_ordering_values(batch: pa.Table, ordering_field: str) -> None:
    check_ordering_field(batch.schema, ordering_field)
    nulls = batch.column(ordering_field).null_count
    if nulls:
        raise InvalidInputError(
            f"ordering field {ordering_field!r} is null in {nulls} row(s); event-time ordering needs a value "
            "in every record"
        )


def dedupe_indices(
    partition_paths: pa.Array | None, record_keys: pa.Array, ordering: pa.Array | None
) -> np.ndarray:
    """Row indices to keep so each (partition, key) appears once: the winner under the merge rule.

    `ordering` is None for commit-time ordering, where the last row of the batch wins.
    """
    n = len(record_keys)
    if n == 0:
        return np.arange(0, dtype=np.int64)
    row = pa.array(np.arange(n, dtype=np.int64))
    if partition_paths is None:
        partition_paths = pa.nulls(n, pa.string()).fill_null("")
    cols = {"p": partition_paths, "k": record_keys, "r": row}
    sort = [("p", "ascending"), ("k", "ascending")]
    if ordering is not None:
        cols["o"] = ordering
        sort.append(("o", "ascending"))
    sort.append(("r", "ascending"))
    t = pa.table(cols)
    order = pc.sort_indices(t, sort_keys=sort)
    p = pc.take(partition_paths, order)
    k = pc.take(record_keys, order)
    # the last row of each (p, k) run wins: it has the greatest ordering value, then the latest position
    last = np.ones(n, dtype=bool)
    if n > 1:
        same = pc.and_(pc.equal(p[1:], p[:-1]), pc.equal(k[1:], k[:-1]))
        last[:-1] = ~same.to_numpy(zero_copy_only=False)
    return np.sort(order.to_numpy()[last])


def incoming_wins(stored: pa.Array, incoming: pa.Array, ordering: bool) -> np.ndarray:
    """Per matched pair, whether the incoming record replaces the stored one."""
    if not ordering:
        return np.ones(len(incoming), dtype=bool)
    if stored.type != incoming.type:
        stored = pc.cast(stored, incoming.type)
    return pc.fill_null(pc.greater_equal(incoming, stored), True).to_numpy(zero_copy_only=False)


def deleted_mask(batch: pa.Table) -> np.ndarray:
    """Rows flagged `_hoodie_is_deleted = true` (Hudi's soft-delete column)."""
    if batch.schema.get_field_index(IS_DELETED_FIELD) < 0:
        return np.zeros(batch.num_rows, dtype=bool)
    return pc.fill_null(batch.column(IS_DELETED_FIELD), False).to_numpy(zero_copy_only=False).astype(bool)
