"""Key generators: a record's key and partition path, computed column-wise on Arrow.

Formats follow Hudi's generators: SIMPLE keys are the field's value, COMPLEX keys are
`f1:v1,f2:v2` with `__null__` / `__empty__` placeholders; partition paths join one segment per
field with `/`, as `field=value` when hive-style, and use `__HIVE_DEFAULT_PARTITION__` for a
null or empty value.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hudi_ops.errors import InvalidInputError, InvalidTableError
from hudi_ops.format.partition_path import DEFAULT_PARTITION, escape_path_name
from hudi_ops.format.table_properties import infer_keygen_type

SUPPORTED_TYPES = ("SIMPLE", "COMPLEX", "NON_PARTITION")
NULL_KEY = "__null__"
EMPTY_KEY = "__empty__"


@dataclass(frozen=True, slots=True)
class KeyGenerator:
    record_key_fields: tuple[str, ...]
    partition_fields: tuple[str, ...] = ()
    hive_style: bool = False
    url_encode: bool = False
    #: `hoodie.table.keygenerator.type`; inferred from the field counts as Hudi does when absent
    type_name: str | None = None

    def __post_init__(self) -> None:
        if self.type_name is None:
            object.__setattr__(self, "type_name", infer_keygen_type(self.record_key_fields, self.partition_fields))
        if self.type_name not in SUPPORTED_TYPES:
            raise InvalidTableError(
                f"the table's key generator type {self.type_name} is not supported by the hudi-ops writer "
                f"(supported: {', '.join(SUPPORTED_TYPES)})"
            )

    def check_columns(self, schema: pa.Schema) -> None:
        for role, names in (("record key", self.record_key_fields), ("partition path", self.partition_fields)):
            for name in names:
                if schema.get_field_index(name) < 0:
                    raise InvalidInputError(
                        f"{role} field {name!r} is not a column of the input (columns: {', '.join(schema.names)}); "
                        f"add it to the data or change the table's {role} fields"
                    )

    def record_keys(self, batch: pa.Table) -> pa.Array:
        self.check_columns(batch.schema)
        if len(self.record_key_fields) == 1 and self.type_name != "COMPLEX":
            name = self.record_key_fields[0]
            keys = _as_string(batch.column(name), name)
            bad = pc.or_kleene(pc.is_null(keys), pc.equal(keys, ""))
            if pc.any(bad).as_py():
                row = pc.index(bad, True).as_py()
                raise InvalidInputError(
                    f"record key field {name!r} is null or empty in row {row}; every record needs a key: "
                    "fill the column or drop those rows"
                )
            return keys.combine_chunks() if isinstance(keys, pa.ChunkedArray) else keys
        parts = []
        all_null = None
        for name in self.record_key_fields:
            values = _as_string(batch.column(name), name)
            is_null = pc.is_null(values)
            all_null = is_null if all_null is None else pc.and_(all_null, is_null)
            filled = pc.if_else(is_null, NULL_KEY, pc.if_else(pc.equal(values, ""), EMPTY_KEY, values))
            parts.append(pc.binary_join_element_wise(f"{name}:", filled, ""))
        if pc.any(all_null).as_py():
            row = pc.index(all_null, True).as_py()
            raise InvalidInputError(
                f"all record key fields {', '.join(self.record_key_fields)} are null in row {row}; "
                "at least one must have a value"
            )
        joined = pc.binary_join_element_wise(*parts, ",")
        return joined.combine_chunks() if isinstance(joined, pa.ChunkedArray) else joined

    def partition_paths(self, batch: pa.Table) -> pa.Array:
        if not self.partition_fields:
            return pa.array([""] * batch.num_rows, pa.string())
        segments = []
        for name in self.partition_fields:
            values = _as_string(batch.column(name), name)
            values = pc.if_else(pc.or_kleene(pc.is_null(values), pc.equal(values, "")), DEFAULT_PARTITION, values)
            if self.url_encode:
                values = _map_distinct(values, escape_path_name)
            if self.hive_style:
                values = pc.binary_join_element_wise(f"{name}=", values, "")
            segments.append(values)
        joined = segments[0] if len(segments) == 1 else pc.binary_join_element_wise(*segments, "/")
        return joined.combine_chunks() if isinstance(joined, pa.ChunkedArray) else joined


def _as_string(values: pa.ChunkedArray | pa.Array, name: str) -> pa.ChunkedArray | pa.Array:
    """Values as Hudi's key generators print them (Java's String.valueOf of the Avro value)."""
    t = values.type
    if pa.types.is_string(t):
        return values
    if pa.types.is_null(t):
        return pc.cast(values, pa.string())
    if pa.types.is_large_string(t) or pa.types.is_integer(t) or pa.types.is_date(t) or pa.types.is_decimal(t):
        return pc.cast(values, pa.string())
    if pa.types.is_boolean(t):
        return pc.if_else(values, "true", "false")
    if pa.types.is_floating(t):
        single = pa.types.is_float32(t)
        return _map_distinct(values, lambda v: java_float_string(v, single=single))
    if pa.types.is_timestamp(t):
        # Avro stores timestamp-micros as a long, and that number is what Hudi's key generators print
        micros = pc.cast(pc.cast(values, pa.timestamp("us", tz=t.tz)), pa.int64())
        return pc.cast(micros, pa.string())
    raise InvalidInputError(
        f"key or partition field {name!r} has type {t}, which cannot form a key; "
        "use a string, number, bool, date or timestamp column"
    )


def _map_distinct(values: pa.ChunkedArray | pa.Array, fn: Callable[[Any], str]) -> pa.Array:
    """Apply a Python function once per distinct value (partition values repeat a lot), nulls kept."""
    distinct = pc.unique(values)
    mapped = pa.array([None if v is None else fn(v) for v in distinct.to_pylist()], pa.string())
    return pc.take(mapped, pc.index_in(values, value_set=distinct))


def java_float_string(value: float, *, single: bool = False) -> str:
    """Java's Double.toString (Float.toString when `single`): `1.0`, `0.001`, `1.0E7`, `1.5E-5`."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    if value == 0:
        return "-0.0" if math.copysign(1, value) < 0 else "0.0"
    shortest = str(np.float32(value)) if single else repr(value)  # the shortest digits that round-trip
    if 1e-3 <= abs(value) < 1e7:
        return shortest if "." in shortest or "e" in shortest else shortest + ".0"
    _, digits, exponent = Decimal(shortest).as_tuple()
    assert isinstance(exponent, int)
    text = "".join(map(str, digits)).rstrip("0") or "0"
    return f"{'-' if value < 0 else ''}{text[0]}.{text[1:] or '0'}E{len(digits) + exponent - 1}"
