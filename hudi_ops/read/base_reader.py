"""Read a set of base files into one Arrow table: projection, row filters, schema alignment."""

from __future__ import annotations

from collections.abc import Sequence

import pyarrow as pa
import pyarrow.compute as pc

from hudi_ops.errors import InvalidTableError
from hudi_ops.format.base_file import read_base_file
from hudi_ops.format.file_group import BaseFile
from hudi_ops.format.schema_align import align
from hudi_ops.read.filters import Filter, to_expression
from hudi_ops.storage import Storage


def read_base_files(
    storage: Storage,
    files: Sequence[BaseFile],
    schema: pa.Schema,
    *,
    columns: Sequence[str] | None = None,
    filters: Sequence[Filter] = (),
    row_filter: pc.Expression | None = None,
) -> pa.Table:
    """Rows of `files`, aligned to `schema` (full, with meta fields), filtered, then projected."""
    expr = to_expression(filters, schema)
    if row_filter is not None:
        expr = row_filter if expr is None else expr & row_filter
    for f in files:
        if f.name.extension != "parquet":
            raise InvalidTableError(
                f"{f.path}: {f.name.extension} base files are not supported; hudi-ops reads parquet base files"
            )
    parts = [align(read_base_file(storage, f.path), schema) for f in files]
    table = pa.concat_tables(parts) if parts else schema.empty_table()
    if expr is not None:
        table = table.filter(expr)
    return table.select(list(columns)) if columns is not None else table
