"""Source files as a Spark DataFrame, and its schema in Arrow's terms for the checks before Hudi starts."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pyarrow as pa

from hudi_ops.errors import InvalidInputError
from hudi_ops.spark.java_errors import JavaFailure
from hudi_ops.storage import FileInfo, Storage


def read_source(spark: Any, source: Storage, files: Sequence[FileInfo], fmt: str) -> Any:
    """The files as one DataFrame; the write reads it on the executors. A file Spark cannot even open
    for its schema is named here, the rest when the write reads them."""
    reader = spark.read.format(fmt)
    if fmt == "csv":
        reader = reader.option("header", "true").option("inferSchema", "true")
    if fmt == "json":
        reader = reader.option("mode", "FAILFAST")
    try:
        return reader.load([source.uri_of(f.path) for f in files])
    except Exception as e:  # Spark reports unreadable input as Java exceptions of several kinds
        failure = JavaFailure.of(e)
        reason = failure.summary if failure else str(e).strip().splitlines()[0][:300]
        raise InvalidInputError(
            f"cannot read the {fmt} source file(s) {', '.join(f.path for f in files)}: {reason}; "
            "fix or remove them, then re-run"
        ) from None


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
