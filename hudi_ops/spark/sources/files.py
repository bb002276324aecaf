"""A landing folder's files (hudi_ops.sources.files) as a Spark DataFrame."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from hudi_ops.errors import InvalidInputError
from hudi_ops.spark.java_errors import JavaFailure
from hudi_ops.spark.jobs.target import TargetTable
from hudi_ops.storage import FileInfo, Storage


def read_source(spark: Any, source: Storage, files: Sequence[FileInfo], fmt: str, target: TargetTable) -> Any:
    """The files as one DataFrame; the write reads it on the executors. A partition folder of the source
    (`dt=2026-11-20/`) becomes a string column (Hudi's partition paths are strings) only where the
    table is partitioned by it or already has it: elsewhere it only selects the files, so that a
    backfill of day folders never adds a column that the steady ingest's files lack. A file Spark
    cannot even open for its schema is named here, the rest when the write reads them."""
    paths = [source.uri_of(f.path) for f in files]
    previous = spark.conf.get(_INFER_PARTITION_TYPES)
    spark.conf.set(_INFER_PARTITION_TYPES, "false")  # else `dt=2026-11-20` is read as a date
    try:
        frame = _reader(spark, fmt).option("basePath", source.uri_of("")).load(paths)
        unwanted = [c for c in folder_columns(files) if not target.takes_column(c)]
        if unwanted:  # a folder's name stays where the files carry the column themselves
            own = set(_reader(spark, fmt).load(paths).columns)
            frame = frame.drop(*(c for c in unwanted if c not in own))
        return frame
    except Exception as e:
        failure = JavaFailure.of(e)
        if failure is None or not _bad_input(failure):  # the storage's trouble (network, rights), not the input's
            raise
        raise InvalidInputError(
            f"cannot read the {fmt} source file(s) {', '.join(f.path for f in files)}: {failure.summary}; "
            "fix or remove them, then re-run"
        ) from None
    finally:
        spark.conf.set(_INFER_PARTITION_TYPES, previous)


def folder_columns(files: Sequence[FileInfo]) -> list[str]:
    """The `name=value` folder names above the files, as Spark's partition discovery reads them."""
    names: dict[str, None] = {}
    for f in files:
        for part in f.path.split("/")[:-1]:
            if "=" in part:
                names.setdefault(part.split("=", 1)[0], None)
    return list(names)


def _reader(spark: Any, fmt: str) -> Any:
    reader = spark.read.format(fmt)
    if fmt == "csv":
        reader = reader.option("header", "true").option("inferSchema", "true")
    if fmt == "json":
        reader = reader.option("mode", "FAILFAST")
    return reader


_INFER_PARTITION_TYPES = "spark.sql.sources.partitionColumnTypeInference.enabled"
#: how Spark says that the input itself cannot be read
_UNREADABLE = ("FAILED_READ_FILE", "is not a Parquet file", "Could not read footer", "Malformed records",
               "Unable to infer schema")


def _bad_input(failure: JavaFailure) -> bool:
    text = "\n".join(message for _, message in failure.chain)
    return failure.find("org.apache.spark.sql.AnalysisException") is not None or any(s in text for s in _UNREADABLE)
