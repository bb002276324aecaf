"""Typed specs of the Spark jobs, turned into the application's command line (DESIGN.md section 4).

The operators build a spec from their (rendered) arguments, so a bad value fails in Airflow with a
clear message before any spark-submit starts.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass, field

from hudi_ops.errors import InvalidInputError
from hudi_ops.sources import SOURCE_FORMATS
from hudi_ops.spark.jobs.backfill import window
from hudi_ops.spark.jobs.hudi_write import OPERATIONS
from hudi_ops.spark.jobs.target import TABLE_TYPES


@dataclass(frozen=True)
class TableSpec:
    """The target table, as the jobs' flags name it; used to create the table on the first write."""

    base_path: str
    name: str
    record_key_field: str
    partition_path_field: str | None = None
    ordering_field: str | None = None
    table_type: str | None = None  # None: the table's own, COPY_ON_WRITE for a new table

    def __post_init__(self) -> None:
        if not self.base_path or not self.name or not self.record_key_field:
            raise InvalidInputError("a table needs base_path, name and record_key_field")
        if self.table_type is not None:
            _choose("table_type", self.table_type, TABLE_TYPES)

    def args(self) -> list[str]:
        out = ["--target-base-path", self.base_path, "--target-table", self.name,
               "--record-key-field", self.record_key_field]
        if self.table_type:
            out += ["--table-type", self.table_type]
        if self.partition_path_field:
            out += ["--partition-path-field", self.partition_path_field]
        if self.ordering_field:
            out += ["--source-ordering-field", self.ordering_field]
        return out


@dataclass(frozen=True)
class SourceSpec:
    path: str
    format: str = "parquet"

    def __post_init__(self) -> None:
        if not self.path:
            raise InvalidInputError("the source path is empty; give the folder the job reads")
        _choose("source format", self.format, SOURCE_FORMATS)

    def args(self) -> list[str]:
        return ["--source-path", self.path, "--source-format", self.format]


@dataclass(frozen=True)
class JobSpec:
    """One run of `ingest` or `backfill` (with its window and the Airflow run it belongs to)."""

    job: str
    table: TableSpec
    source: SourceSpec
    operation: str = "UPSERT"
    hoodie_conf: Mapping[str, str] = field(default_factory=dict)
    start: str | None = None
    end: str | None = None
    run_id: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "operation", self.operation.upper())
        _choose("operation", self.operation, OPERATIONS)
        _choose("job", self.job, ("ingest", "backfill"))
        if self.job == "backfill":
            if self.start is None or self.end is None:
                raise InvalidInputError("a backfill needs start and end dates (YYYY-MM-DD)")
            window(self.start, self.end)

    def application_args(self) -> list[str]:
        out = [self.job, *self.table.args(), *self.source.args(), "--op", self.operation]
        if self.job == "backfill":
            out += ["--start", str(self.start), "--end", str(self.end)]
            if self.run_id:
                out += ["--run-id", self.run_id]
        return out + hoodie_conf_args(self.hoodie_conf)


def hoodie_conf_args(options: Mapping[str, str]) -> list[str]:
    """`--hoodie-conf k=v` for each option, in a stable order."""
    return [arg for key, value in sorted(options.items()) for arg in ("--hoodie-conf", f"{key}={value}")]


def _choose(name: str, value: str, choices: Collection[str]) -> None:
    if value not in choices:
        raise InvalidInputError(f"unknown {name} {value!r}; use one of {', '.join(choices)}")
