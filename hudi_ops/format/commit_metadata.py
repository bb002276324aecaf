"""Commit metadata: what a commit, deltacommit or replacecommit wrote, per partition and file group.

Table version 8 stores it as an Avro `HoodieCommitMetadata` (or `HoodieReplaceCommitMetadata`)
container; version 6 as Jackson JSON with the same camelCase names. Both read into one value object.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from hudi_ops.errors import InvalidTableError
from hudi_ops.format.avro_container import (
    MAGIC,
    from_avro_record,
    load_schema,
    read_single_record,
    to_avro_record,
    write_single_record,
)

#: `prevCommit` of a write stat that starts a new file group: Java writes the string "null"
NULL_COMMIT = "null"


@dataclass(frozen=True, slots=True, kw_only=True)
class RuntimeStats:
    """Milliseconds a task spent scanning, creating and merging (`HoodieRuntimeStats`)."""

    total_scan_time: int = 0
    total_create_time: int = 0
    total_upsert_time: int = 0


@dataclass(frozen=True, slots=True, kw_only=True)
class WriteStat:
    """One `HoodieWriteStat`: what one task wrote to one file group.

    Defaults are what Spark on Hudi 1.0 writes: counters 0, `prev_commit` "null" for a new file
    group, everything optional None. Paths are relative to the table base path; `base_file`,
    `log_files` and `prev_base_file` are bare file names.
    """

    file_id: str | None = None
    path: str | None = None
    prev_commit: str | None = NULL_COMMIT
    num_writes: int = 0
    num_deletes: int = 0
    num_update_writes: int = 0
    total_write_bytes: int = 0
    total_write_errors: int = 0
    partition_path: str | None = None
    total_log_records: int = 0
    total_log_files: int | None = None
    total_updated_records_compacted: int = 0
    num_inserts: int = 0
    total_log_blocks: int = 0
    total_corrupt_log_block: int = 0
    total_rollback_blocks: int = 0
    file_size_in_bytes: int = 0
    log_version: int | None = None
    log_offset: int | None = None
    base_file: str | None = None
    log_files: tuple[str, ...] | None = None
    cdc_stats: dict[str, int] | None = None
    prev_base_file: str | None = None
    min_event_time: int | None = None
    max_event_time: int | None = None
    runtime_stats: RuntimeStats | None = None
    total_log_files_compacted: int = 0
    total_log_read_time_ms: int = 0
    total_log_size_compacted: int = 0
    temp_path: str | None = None
    num_updates: int = 0

    @property
    def is_log_write(self) -> bool:
        """A MOR log append (Java's `HoodieDeltaWriteStat`)."""
        return self.log_version is not None or self.log_files is not None or self.base_file is not None


@dataclass(frozen=True, slots=True, kw_only=True)
class CommitMetadata:
    """A commit's metadata; `partition_to_replace_file_ids` set (even empty) makes it a replace commit."""

    partition_to_write_stats: dict[str, tuple[WriteStat, ...]] = field(default_factory=dict)
    compacted: bool = False
    extra_metadata: dict[str, str] = field(default_factory=dict)
    version: int | None = None  # Spark 1.0 leaves it null
    operation_type: str | None = None
    partition_to_replace_file_ids: dict[str, tuple[str, ...]] | None = None

    # --- reading ----------------------------------------------------------------------------------

    @classmethod
    def parse(cls, data: bytes) -> CommitMetadata:
        """Avro (table version 8+), JSON (version 6, or legacy instants after an upgrade) or empty."""
        if not data.strip():
            return cls()  # Java reads an empty commit file as empty metadata
        if data.startswith(MAGIC):
            return cls.from_avro_bytes(data)
        return cls.from_json_bytes(data)

    @classmethod
    def from_avro_bytes(cls, data: bytes) -> CommitMetadata:
        record = read_single_record(data)
        if record is None:
            return cls()
        if "partitionToWriteStats" not in record:
            raise InvalidTableError("Avro file holds no commit metadata (no partitionToWriteStats field)")
        return cls._from_record(record)

    @classmethod
    def from_json_bytes(cls, data: bytes) -> CommitMetadata:
        try:
            obj = json.loads(data)
        except (UnicodeDecodeError, ValueError) as e:
            raise InvalidTableError(f"commit metadata is neither Avro nor JSON: {e}") from e
        if not isinstance(obj, dict):
            raise InvalidTableError(f"commit metadata JSON is a {type(obj).__name__}, not an object")
        return cls._from_record(obj)

    @classmethod
    def _from_record(cls, record: dict[str, Any]) -> CommitMetadata:
        # a replace record stays a replace commit even when its replaced-ids map is null
        if "partitionToReplaceFileIds" in record and record["partitionToReplaceFileIds"] is None:
            record = {**record, "partitionToReplaceFileIds": {}}
        return from_avro_record(cls, record)

    # --- writing ----------------------------------------------------------------------------------

    @property
    def is_replace(self) -> bool:
        return self.partition_to_replace_file_ids is not None

    def to_avro_bytes(self, *, _sync: bytes | None = None) -> bytes:
        """The v8 file: a `HoodieReplaceCommitMetadata` for replace commits, else `HoodieCommitMetadata`."""
        record = to_avro_record(self)
        if self.is_replace:
            schema_json, _ = load_schema("HoodieReplaceCommitMetadata")
        else:
            del record["partitionToReplaceFileIds"]
            schema_json, _ = load_schema("HoodieCommitMetadata")
        return write_single_record(schema_json, record, _sync=_sync)

    def to_json(self) -> str:
        """Hudi's v6 JSON, laid out as Java's Jackson pretty printer does (same keys, order, spacing)."""
        out: dict[str, Any] = {
            "partitionToWriteStats": {
                p: [_stat_json(s) for s in stats] for p, stats in self.partition_to_write_stats.items()
            },
            "compacted": self.compacted,
            "extraMetadata": dict(self.extra_metadata),
        }
        if self.version is not None:
            out["version"] = self.version
        out["operationType"] = self.operation_type
        if self.is_replace:
            out["partitionToReplaceFileIds"] = to_avro_record(self.partition_to_replace_file_ids)
        return _jackson_pretty(out)

    # --- questions --------------------------------------------------------------------------------

    def write_stats(self) -> Iterator[WriteStat]:
        for stats in self.partition_to_write_stats.values():
            yield from stats

    def file_ids_by_partition(self) -> dict[str, frozenset[str]]:
        """File groups written per partition. Inflight workload profiles name rows bound for new
        file groups with fileId "", which is no file group, so those are left out."""
        return {
            p: frozenset(s.file_id for s in stats if s.file_id)
            for p, stats in self.partition_to_write_stats.items()
        }

    @property
    def schema(self) -> str | None:
        """The table's Avro schema (without `_hoodie_*` fields) that completed commits carry."""
        return self.extra_metadata.get("schema") or None

    @property
    def num_writes(self) -> int:
        return sum(s.num_writes for s in self.write_stats())

    @property
    def num_inserts(self) -> int:
        return sum(s.num_inserts for s in self.write_stats())

    @property
    def num_update_writes(self) -> int:
        return sum(s.num_update_writes for s in self.write_stats())

    @property
    def num_deletes(self) -> int:
        return sum(s.num_deletes for s in self.write_stats())

    @property
    def total_write_bytes(self) -> int:
        return sum(s.total_write_bytes for s in self.write_stats())

    @property
    def files_written(self) -> int:
        """Base and log files written (workload-profile entries have no path and do not count)."""
        return sum(1 for s in self.write_stats() if s.path)


# Order and set of keys Jackson writes for a v6 HoodieWriteStat; log writes add _V6_LOG_KEYS.
_V6_KEYS = (
    "fileId", "path", "cdcStats", "prevCommit", "numWrites", "numDeletes", "numUpdateWrites", "numInserts",
    "totalWriteBytes", "totalWriteErrors", "tempPath", "partitionPath", "totalLogRecords",
    "totalLogFilesCompacted", "totalLogSizeCompacted", "totalUpdatedRecordsCompacted", "totalLogBlocks",
    "totalCorruptLogBlock", "totalRollbackBlocks", "fileSizeInBytes", "minEventTime", "maxEventTime",
    "runtimeStats",
)
_V6_LOG_KEYS = ("logVersion", "logOffset", "baseFile", "logFiles")
_V6_RUNTIME_KEYS = ("totalScanTime", "totalUpsertTime", "totalCreateTime")
_DEFAULT_STAT = to_avro_record(WriteStat())


def _stat_json(stat: WriteStat) -> dict[str, Any]:
    full = to_avro_record(stat)
    keys = _V6_KEYS + (_V6_LOG_KEYS if stat.is_log_write else ())
    out = {k: full[k] for k in keys}
    if stat.runtime_stats is not None:
        out["runtimeStats"] = {k: full["runtimeStats"][k] for k in _V6_RUNTIME_KEYS}
    if stat.is_log_write:
        out["recordsStats"] = {"val": None}  # Java's empty Option of column stats; readers ignore it
    # v8-only fields (prevBaseFile, numUpdates, ...) appear only when set, so nothing is lost
    out.update((k, v) for k, v in full.items() if k not in out and v != _DEFAULT_STAT[k])
    return out


def _jackson_pretty(value: Any, depth: int = 0) -> str:
    """JSON as Jackson's DefaultPrettyPrinter writes it: `"k" : v`, two-space indent, inline arrays."""
    if isinstance(value, dict):
        if not value:
            return "{ }"
        pad = "  " * (depth + 1)
        items = (f"{pad}{_jackson_pretty(k)} : {_jackson_pretty(v, depth + 1)}" for k, v in value.items())
        return "{\n" + ",\n".join(items) + "\n" + "  " * depth + "}"
    if isinstance(value, list):
        return "[ " + ", ".join(_jackson_pretty(v, depth) for v in value) + " ]" if value else "[ ]"
    return json.dumps(value, ensure_ascii=False)
