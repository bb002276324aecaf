"""Read a set of base files into one Arrow table: projection and row filters pushed into the scan.

All files are scanned as one pyarrow dataset with the table's schema, so columns added after a
file was written read as null, widened types are cast, only the needed columns are decoded, and
row groups whose statistics rule out the filter are skipped. When a filtered column changed type
between commits (a v9 timestamp key generator writes long, then string), the scan cannot compare
the old files' statistics with the filter; those reads load each file, cast it, then filter.
"""

from __future__ import annotations

from collections.abc import Sequence

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds

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
    """Rows of `files` under `schema` (full, with meta fields), filtered, then projected to `columns`."""
    expr = to_expression(filters, schema)
    if row_filter is not None:
        expr = row_filter if expr is None else expr & row_filter
    for f in files:
        if f.name.extension != "parquet":
            raise InvalidTableError(
                f"{f.path}: {f.name.extension} base files are not supported; hudi-ops reads parquet base files"
            )
    wanted = list(columns) if columns is not None else schema.names
    if not files:
        return schema.empty_table().select(wanted)
    dataset = ds.dataset(
        [storage.full_path(f.path) for f in files], schema=schema, format="parquet",
        filesystem=storage.fs, partitioning=None,
    )
    try:
        return dataset.to_table(columns=wanted, filter=expr)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError):
        table = pa.concat_tables([align(read_base_file(storage, f.path), schema) for f in files])
        return (table.filter(expr) if expr is not None else table).select(wanted)
