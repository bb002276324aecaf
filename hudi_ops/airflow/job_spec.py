"""Typed specs of the Spark jobs, turned into the application's command line (DESIGN.md section 4).

The operators build a spec from their (rendered) arguments, so a bad value fails in Airflow with a
clear message before any spark-submit starts.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass, field

from hudi_ops.errors import InvalidInputError

OPERATIONS = ("UPSERT", "INSERT", "BULK_INSERT", "DELETE")
SOURCE_FORMATS = ("parquet", "json", "csv")
TABLE_TYPES = ("COPY_ON_WRITE", "MERGE_ON_READ")


@dataclass(frozen=True)
class TableSpec:
    """The target table, as the jobs' flags name it; used to create the table on the first write."""

    base_path: str
    name: str
    record_key_field: str
    partition_path_field: str | None = None
    ordering_field: str | None = None
    table_type: str = "COPY_ON_WRITE"

    def __post_init__(self) -> None:
        if not self.base_path or not self.name or not self.record_key_field:
            raise InvalidInputError("a table needs base_path, name and record_key_field")
        _choose("table_type", self.table_type, TABLE_TYPES)

    def args(self) -> list[str]:
        out = ["--target-base-path", self.base_path, "--target-table", self.name, "--table-type", self.table_type,
               "--record-key-field", self.record_key_field]
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
    """One run of `ingest` or `backfill` (with its window)."""

    job: str
    table: TableSpec
    source: SourceSpec
    operation: str = "UPSERT"
    hoodie_conf: Mapping[str, str] = field(default_factory=dict)
    start: dt.date | None = None
    end: dt.date | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "operation", self.operation.upper())
        _choose("operation", self.operation, OPERATIONS)
        _choose("job", self.job, ("ingest", "backfill"))
        if self.job == "backfill":
            if self.start is None or self.end is None:
                raise InvalidInputError("a backfill needs start and end dates (YYYY-MM-DD)")
            if self.start > self.end:
                raise InvalidInputError(f"the backfill window ends ({self.end}) before it starts ({self.start})")

    def application_args(self) -> list[str]:
        out = [self.job, *self.table.args(), *self.source.args(), "--op", self.operation]
        if self.job == "backfill":
            out += ["--start", str(self.start), "--end", str(self.end)]
        for key, value in sorted(self.hoodie_conf.items()):
            out += ["--hoodie-conf", f"{key}={value}"]
        return out


def parse_date(name: str, value: str | dt.date) -> dt.date:
    if isinstance(value, dt.date):
        return value
    try:
        return dt.date.fromisoformat(str(value))
    except ValueError:
        raise InvalidInputError(f"{name} {value!r} is not a date; write YYYY-MM-DD") from None


def _choose(name: str, value: str, choices: tuple[str, ...]) -> None:
    if value not in choices:
        raise InvalidInputError(f"unknown {name} {value!r}; use one of {', '.join(choices)}")
