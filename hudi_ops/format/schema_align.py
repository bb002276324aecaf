"""Bring a stored table to a target schema: columns added later read as null, types widened."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc


def align(table: pa.Table, schema: pa.Schema) -> pa.Table:
    cols = []
    for field in schema:
        if table.schema.get_field_index(field.name) >= 0:
            col = table.column(field.name)
            cols.append(col if col.type == field.type else pc.cast(col, field.type))
        else:
            cols.append(pa.nulls(table.num_rows, field.type))
    return pa.Table.from_arrays(cols, schema=schema)
