"""The schema a write uses: the table's schema, widened by new input columns, checked against input.

Types are normalised to what Hudi stores (Avro): timestamps in microseconds, plain strings and
binaries, dictionaries decoded. A column the table has but the input lacks, or a value that cannot
be cast to the table's type, is an InvalidInputError naming the column.
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

from hudi_ops.errors import InvalidInputError
from hudi_ops.format.meta_fields import META_FIELDS


def normalize_type(t: pa.DataType) -> pa.DataType:
    if pa.types.is_dictionary(t):
        return normalize_type(t.value_type)
    if pa.types.is_timestamp(t):
        return pa.timestamp("us", tz=t.tz)
    if pa.types.is_large_string(t) or pa.types.is_string_view(t):
        return pa.string()
    if pa.types.is_large_binary(t) or pa.types.is_binary_view(t):
        return pa.binary()
    if pa.types.is_large_list(t) or pa.types.is_list_view(t):
        return pa.list_(normalize_type(t.value_type))
    if pa.types.is_list(t):
        return pa.list_(normalize_type(t.value_type))
    if pa.types.is_struct(t):
        return pa.struct([pa.field(f.name, normalize_type(f.type), f.nullable) for f in t])
    if pa.types.is_map(t):
        return pa.map_(normalize_type(t.key_type), normalize_type(t.item_type))
    return t


def write_schema(input_schema: pa.Schema, table_schema: pa.Schema | None, *, require_all: bool) -> pa.Schema:
    """The table's columns (in table order) followed by columns new in the input."""
    user = [pa.field(f.name, normalize_type(f.type)) for f in input_schema if f.name not in META_FIELDS]
    if table_schema is None:
        return pa.schema(user)
    present = {f.name for f in user}
    if require_all:
        missing = [f.name for f in table_schema if f.name not in present]
        if missing:
            raise InvalidInputError(
                f"the input lacks table column(s) {', '.join(map(repr, missing))}; every write must carry all columns "
                "of the table (add them, with nulls if unknown)"
            )
    known = {f.name for f in table_schema}
    return pa.schema([*table_schema, *(f for f in user if f.name not in known)])


def conform(batch: pa.Table, schema: pa.Schema) -> pa.Table:
    """The input's columns cast to `schema`, in its order (missing columns become nulls)."""
    cols = []
    for field in schema:
        if batch.schema.get_field_index(field.name) < 0:
            cols.append(pa.nulls(batch.num_rows, field.type))
            continue
        col = batch.column(field.name)
        if col.type != field.type:
            if pa.types.is_dictionary(col.type):
                col = pc.cast(col, col.type.value_type)
            try:
                col = pc.cast(col, field.type, safe=True)
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as e:
                raise InvalidInputError(
                    f"column {field.name!r} has type {col.type} but the table stores {field.type}, and the values "
                    f"cannot be converted ({e}); send {field.type} values"
                ) from None
        cols.append(col)
    return pa.Table.from_arrays(cols, schema=schema)
