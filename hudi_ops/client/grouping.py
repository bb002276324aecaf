"""Row indices grouped by a label column, in one sort instead of one scan per label."""

from __future__ import annotations

import numpy as np


def group_rows(labels: np.ndarray) -> dict[object, np.ndarray]:
    """{label: ascending row indices with that label}; rows labelled None are left out."""
    present = np.not_equal(labels, None) if labels.dtype == object else None
    rows = np.nonzero(present)[0] if present is not None else np.arange(len(labels))
    if len(rows) == 0:
        return {}
    keys = labels[rows].astype(str) if labels.dtype == object else labels[rows]
    order = np.argsort(keys, kind="stable")
    sorted_keys = keys[order]
    starts = np.flatnonzero(np.r_[True, sorted_keys[1:] != sorted_keys[:-1]])
    ends = np.r_[starts[1:], len(order)]
    return {labels[rows[order[s]]]: rows[order[s:e]] for s, e in zip(starts, ends, strict=True)}
