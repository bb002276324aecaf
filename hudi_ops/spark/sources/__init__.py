"""Each kind of source's batch (hudi_ops.sources) as a Spark DataFrame, the rows Hudi writes; and its
columns in Arrow's terms, for the checks before Hudi starts."""

from __future__ import annotations

from typing import Any

import pyarrow as pa


def arrow_schema(frame: Any) -> pa.Schema:
    """The DataFrame's columns as Arrow types; a column Arrow cannot express is given as null (unchecked)."""
    from pyspark.sql.pandas.types import to_arrow_type

    fields = []
    for f in frame.schema.fields:
        try:
            fields.append(pa.field(f.name, to_arrow_type(f.dataType)))
        except (TypeError, ValueError, ImportError):
            fields.append(pa.field(f.name, pa.null()))
    return pa.schema(fields)
