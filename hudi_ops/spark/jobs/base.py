"""What every job shares: the target table, reading source files with Spark, checkpoints, results."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from hudi_ops.config import command_line_options
from hudi_ops.errors import InvalidInputError, TableNotFoundError
from hudi_ops.format.meta_client import MetaClient
from hudi_ops.storage import FileInfo, Storage
from hudi_ops.table import HudiTable

SOURCE_EXTENSIONS = {"parquet": (".parquet",), "json": (".json", ".jsonl"), "csv": (".csv",)}


@dataclass(frozen=True)
class JobResult:
    job: str
    instant: str | None
    operation: str | None
    rows: int = 0
    files: int = 0
    bytes: int = 0
    checkpoint: str | None = None
    durations_ms: dict[str, float] = field(default_factory=dict)
    commits: int = 0

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def write_options(args: argparse.Namespace) -> dict[str, str]:
    return command_line_options(args.props, args.hoodie_conf)


def target_table(args: argparse.Namespace, options: dict[str, str]) -> HudiTable:
    """The target table, created from the job's flags when it does not exist yet."""
    try:
        return HudiTable(MetaClient.open(args.target_base_path))
    except TableNotFoundError:
        pass
    if not args.record_key_field:
        raise InvalidInputError(f"no table at {args.target_base_path}; give --record-key-field to create one")
    hive = options.get("hoodie.datasource.write.hive_style_partitioning", "false").lower() == "true"
    return HudiTable.create(
        args.target_base_path,
        name=args.target_table or "hudi_table",
        table_type=args.table_type,
        record_key=[k for k in args.record_key_field.split(",") if k],
        partition_fields=[p for p in (args.partition_path_field or "").split(",") if p],
        ordering_field=args.source_ordering_field,
        hive_style=hive,
    )


def source_files(source: Storage, folder: str, fmt: str) -> list[FileInfo]:
    """Data files below `folder` of the source, oldest first (hidden and `_` files such as _SUCCESS skipped)."""
    suffixes = SOURCE_EXTENSIONS[fmt]
    files = [
        f for f in source.walk_files(folder)
        if f.name.endswith(suffixes) and not any(part.startswith((".", "_")) for part in f.path.split("/"))
    ]
    return sorted(files, key=lambda f: (f.mtime_ms, f.path))


def read_source(spark: Any, source: Storage, files: Sequence[FileInfo], fmt: str) -> Any:
    """The files as a Spark DataFrame; the write reads it on the executors. Files Spark cannot even
    open for their schema are named here, the rest when the write reads them."""
    paths = [source.uri_of(f.path) for f in files]
    reader = spark.read.format(fmt)
    if fmt == "csv":
        reader = reader.option("header", "true").option("inferSchema", "true")
    if fmt == "json":
        reader = reader.option("mode", "FAILFAST")
    try:
        return reader.load(paths)
    except Exception as e:  # Spark reports unreadable input as Java exceptions of several kinds
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise InvalidInputError(
            f"cannot read the {fmt} source file(s) {', '.join(f.path for f in files)}: {first[:300]}"
        ) from None


def last_checkpoint(table: HudiTable, key: str) -> str | None:
    """The newest value of `key` in the extra metadata of completed commits (Hudi's checkpoint idea)."""
    timeline = table.timeline()
    for inst in sorted(timeline.completed_writes(), key=timeline.completion_time, reverse=True):
        value = timeline.commit_metadata(inst).extra_metadata.get(key)
        if value:
            return value
    return None
