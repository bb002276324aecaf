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
from hudi_ops.format.avro_container import MAGIC, from_avro_record, read_single_record

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

    # --- questions --------------------------------------------------------------------------------

    @property
    def is_replace(self) -> bool:
        return self.partition_to_replace_file_ids is not None

    def write_stats(self) -> Iterator[WriteStat]:
        for stats in self.partition_to_write_stats.values():
            yield from stats
