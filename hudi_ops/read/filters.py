"""Simple filters `(column, op, value)` as hudi-rs takes them: row expressions and partition pruning."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from hudi_ops.errors import InvalidInputError

Filter = tuple[str, str, Any]
_OPS = ("=", "==", "!=", "<", "<=", ">", ">=", "in", "not in")


def check(filters: Sequence[Filter], schema: pa.Schema) -> None:
    for f in filters:
        if len(f) != 3:
            raise InvalidInputError(f"filter {f!r} must be (column, op, value), e.g. ('city', '=', 'sf')")
        name, op, _ = f
        if op.lower() not in _OPS:
            raise InvalidInputError(f"filter operator {op!r} is not supported; use one of {', '.join(_OPS)}")
        if schema.get_field_index(name) < 0:
            raise InvalidInputError(f"filter column {name!r} is not in the table (columns: {', '.join(schema.names)})")


def to_expression(filters: Sequence[Filter], schema: pa.Schema) -> pc.Expression | None:
    expr = None
    for name, op, value in filters:
        e = _one(pc.field(name), op.lower(), value, schema.field(name).type)
        expr = e if expr is None else expr & e
    return expr


def _one(col: pc.Expression, op: str, value: Any, t: pa.DataType) -> pc.Expression:
    if op in ("in", "not in"):
        values = value.split(",") if isinstance(value, str) else list(value)
        arr = pa.array([_cast(v, t) for v in values], t)
        e = col.isin(arr)
        return ~e if op == "not in" else e
    v = pa.scalar(_cast(value, t), t)
    return {
        "=": col == v, "==": col == v, "!=": col != v, "<": col < v, "<=": col <= v, ">": col > v, ">=": col >= v,
    }[op]


def _cast(value: Any, t: pa.DataType) -> Any:
    if isinstance(value, str) and not pa.types.is_string(t):
        try:
            return pc.cast(pa.scalar(value), t).as_py()
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            raise InvalidInputError(f"filter value {value!r} cannot be read as {t}") from None
    return value


def keep_partition(values: dict[str, str | None], filters: Sequence[Filter], schema: pa.Schema) -> bool:
    """Whether a partition whose fields have these string values can hold matching rows."""
    relevant = [f for f in filters if f[0] in values]
    if not relevant or any(values[f[0]] is None for f in relevant):
        return True  # the default partition holds nulls and empty strings alike: read it
    row = {}
    for name in {f[0] for f in relevant}:
        t = schema.field(name).type
        try:
            row[name] = pa.array([values[name]]).cast(t)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            return True  # a formatted value (e.g. a date path) we cannot compare: read it
    expr = to_expression(relevant, schema)
    return bool(pa.table(row).filter(expr).num_rows) if expr is not None else True
