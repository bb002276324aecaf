"""Key generators: a record's key and partition path, computed column-wise on Arrow.

Formats follow Hudi's generators: SIMPLE keys are the field's value, COMPLEX keys are
`f1:v1,f2:v2` with `__null__` / `__empty__` placeholders; partition paths join one segment per
field with `/`, as `field=value` when hive-style, and use `__HIVE_DEFAULT_PARTITION__` for a
null or empty value.
"""

from __future__ import annotations

import urllib.parse
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.compute as pc

from hudi_ops.errors import InvalidInputError

NULL_KEY = "__null__"
EMPTY_KEY = "__empty__"
DEFAULT_PARTITION = "__HIVE_DEFAULT_PARTITION__"


@dataclass(frozen=True, slots=True)
class KeyGenerator:
    record_key_fields: tuple[str, ...]
    partition_fields: tuple[str, ...] = ()
    hive_style: bool = False
    url_encode: bool = False

    @property
    def type_name(self) -> str:
        """The `hoodie.table.keygenerator.type` value Hudi 1.0 writes for this generator."""
        if not self.partition_fields:
            return "NON_PARTITION"
        if len(self.record_key_fields) == 1 and len(self.partition_fields) == 1:
            return "SIMPLE"
        return "COMPLEX"

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
            keys = _as_string(batch.column(name))
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
            values = _as_string(batch.column(name))
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
            values = _as_string(batch.column(name))
            values = pc.if_else(pc.or_kleene(pc.is_null(values), pc.equal(values, "")), DEFAULT_PARTITION, values)
            if self.url_encode:
                values = pa.array([urllib.parse.quote(v, safe="") for v in values.to_pylist()], pa.string())
            if self.hive_style:
                values = pc.binary_join_element_wise(f"{name}=", values, "")
            segments.append(values)
        joined = segments[0] if len(segments) == 1 else pc.binary_join_element_wise(*segments, "/")
        return joined.combine_chunks() if isinstance(joined, pa.ChunkedArray) else joined


def _as_string(values: pa.ChunkedArray | pa.Array) -> pa.ChunkedArray | pa.Array:
    t = values.type
    if pa.types.is_string(t):
        return values
    if pa.types.is_large_string(t) or pa.types.is_integer(t) or pa.types.is_date(t):
        return pc.cast(values, pa.string())
    if pa.types.is_boolean(t):
        return pc.if_else(values, "true", "false")
    if pa.types.is_floating(t) or pa.types.is_decimal(t) or pa.types.is_timestamp(t):
        return pc.cast(values, pa.string())
    raise InvalidInputError(
        f"a key or partition field of type {t} cannot be turned into a key; use a string, number, bool or date column"
    )
