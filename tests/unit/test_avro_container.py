"""One-record Avro containers as Hudi writes them, read back into the plan and metadata dataclasses.

Containers are written here with fastavro (null codec, one block, as Java's `DataFileWriter` does) and Hudi's
own schemas: the ones real tables embed (shared/reference/v8-schemas) and, for the records no fixture holds,
`hudi_schemas/` (rendered from apache/hudi hudi-common/src/main/avro, 1.0.x field lists, in the one-line form
Java's `Schema.toString()` prints).
"""

from __future__ import annotations

import dataclasses
import io
import json
import types
import typing
from pathlib import Path
from typing import Any

import fastavro
import pytest

from hudi_ops.errors import InvalidTableError
from hudi_ops.format.avro_container import avro_name, from_avro_record, read_single_record
from hudi_ops.format.commit_metadata import CommitMetadata
from hudi_ops.format.plans import (
    ActionInstant,
    CleanerPlan,
    CleanFileInfo,
    CleanMetadata,
    CleanPartitionMetadata,
    CompactionPlan,
    InstantInfo,
    RequestedReplaceMetadata,
    RollbackMetadata,
    RollbackPlan,
    RollbackRequest,
    SavepointMetadata,
    SavepointPartitionMetadata,
)
from tests.shared_data import FIXTURES, REFERENCE

SCHEMA_FOLDERS = (REFERENCE / "v8-schemas", Path(__file__).parent / "hudi_schemas")
#: every record class hudi-ops reads, by the Hudi record it reads
RECORDS = {c.SCHEMA: c for c in (CleanerPlan, CleanMetadata, CompactionPlan, RequestedReplaceMetadata, RollbackPlan,
                                 RollbackMetadata, SavepointMetadata)}
RECORDS |= {"HoodieCommitMetadata": CommitMetadata, "HoodieReplaceCommitMetadata": CommitMetadata}


def hudi_schema(name: str) -> dict[str, Any]:
    for folder in SCHEMA_FOLDERS:
        if (folder / f"{name}.avsc").exists():
            return json.loads((folder / f"{name}.avsc").read_text())
    raise LookupError(f"no Hudi schema {name}")


def container(name: str, *records: dict[str, Any]) -> bytes:
    """An Avro object container of Hudi's record `name` holding `records`."""
    buf = io.BytesIO()
    fastavro.writer(buf, fastavro.parse_schema(hudi_schema(name)), list(records))
    return buf.getvalue()


ROLLBACK_PLAN = {"instantToRollback": {"commitTime": "20250101000000000", "action": "commit"},
                 "RollbackRequests": [], "version": 1}


# -- containers ------------------------------------------------------------------------------------


def test_read_empty_is_none() -> None:
    assert read_single_record(b"") is None


def test_reads_a_java_written_file() -> None:
    data = (FIXTURES / "core-tests-data/commit_metadata/v8_deltacommit.avro").read_bytes()
    record = read_single_record(data, expect="HoodieCommitMetadata")
    assert record == next(iter(fastavro.reader(io.BytesIO(data))))
    assert record is not None and record["operationType"] == "UPSERT"


def test_read_rejects_non_avro_and_garbage() -> None:
    with pytest.raises(InvalidTableError, match="not an Avro container"):
        read_single_record(b'{"partitionToWriteStats": {}}')
    good = container("HoodieRollbackPlan", ROLLBACK_PLAN)
    assert read_single_record(good) is not None
    with pytest.raises(InvalidTableError, match="corrupt"):
        read_single_record(good[:-30])


def test_read_checks_record_type() -> None:
    data = container("HoodieRollbackPlan", ROLLBACK_PLAN)
    assert read_single_record(data, expect="HoodieRollbackPlan") is not None
    with pytest.raises(InvalidTableError, match="expected an Avro HoodieCleanerPlan record"):
        read_single_record(data, expect="HoodieCleanerPlan")
    with pytest.raises(InvalidTableError, match="expected an Avro HoodieCleanerPlan record"):
        CleanerPlan.from_avro_bytes(data)
    with pytest.raises(InvalidTableError, match="empty file"):
        CleanerPlan.from_avro_bytes(b"")


def test_read_rejects_two_records() -> None:
    with pytest.raises(InvalidTableError, match="found 2"):
        read_single_record(container("HoodieRollbackPlan", ROLLBACK_PLAN, ROLLBACK_PLAN))


# -- records -> dataclasses ------------------------------------------------------------------------


def test_avro_names() -> None:
    names = {f.name: avro_name(f) for f in dataclasses.fields(RollbackPlan)}
    assert names == {"instant_to_rollback": "instantToRollback", "rollback_requests": "RollbackRequests",
                     "version": "version"}


def _records_of(avro: Any, named: dict[str, dict[str, Any]]) -> Any:
    """The record type inside a field's type (through unions, arrays and maps), collecting named records."""
    if isinstance(avro, list):
        found = [r for t in avro if (r := _records_of(t, named)) is not None]
        return found[0] if found else None
    if isinstance(avro, str):
        return named.get(avro.rpartition(".")[2])
    kind = avro.get("type")
    if kind == "record":
        named[avro["name"].rpartition(".")[2]] = avro
        for f in avro["fields"]:
            _records_of(f["type"], named)
        return avro
    if kind == "array":
        return _records_of(avro["items"], named)
    if kind == "map":
        return _records_of(avro["values"], named)
    return _records_of(kind, named) if isinstance(kind, (dict, list)) else None


def _dataclass_in(tp: Any) -> type | None:
    """The dataclass inside a field's type hint (through `X | None`, tuples and dicts)."""
    if isinstance(tp, types.UnionType):
        (tp,) = [a for a in typing.get_args(tp) if a is not type(None)]
    if typing.get_origin(tp) in (tuple, dict):
        return _dataclass_in(typing.get_args(tp)[-1] if typing.get_origin(tp) is dict else typing.get_args(tp)[0])
    return tp if dataclasses.is_dataclass(tp) else None


def _mismatches(cls: type, record: dict[str, Any], named: dict[str, dict[str, Any]]) -> list[str]:
    ours = {avro_name(f): f for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
    theirs = {f["name"]: f["type"] for f in record["fields"]}
    out = [f"{cls.__name__} lacks {n}" for n in theirs.keys() - ours.keys()]
    out += [f"{record['name']} lacks {n}" for n in ours.keys() - theirs.keys()]
    hints = typing.get_type_hints(cls)
    for name in ours.keys() & theirs.keys():
        inner = _dataclass_in(hints[ours[name].name])
        if inner is not None:
            out += _mismatches(inner, _records_of(theirs[name], named), named)
    return out


@pytest.mark.parametrize("name", sorted(RECORDS))
def test_every_field_of_hudis_schema_is_read_by_its_name(name: str) -> None:
    """The dataclasses name every field of Hudi's records, nested records included, and no other."""
    named: dict[str, dict[str, Any]] = {}
    schema = _records_of(hudi_schema(name), named)
    mismatches = _mismatches(RECORDS[name], schema, named)
    if name == "HoodieCommitMetadata":  # one class reads both commit records; only replace commits list ids
        mismatches.remove("HoodieCommitMetadata lacks partitionToReplaceFileIds")
    assert mismatches == []


def test_from_record_fills_defaults_for_missing_and_null() -> None:
    request = from_avro_record(RollbackRequest, {"partitionPath": "p", "filesToBeDeleted": None})
    assert request == RollbackRequest(partition_path="p")  # non-nullable null -> default
    with pytest.raises(InvalidTableError, match="RollbackRequest"):
        from_avro_record(RollbackRequest, {})


# -- records no fixture holds, as Hudi's schemas lay them out ---------------------------------------

NAME = "f1-0_0-1-1_20241231000000000.parquet"
PATH = f"/t/city=a/{NAME}"
PARTITION = {"partitionPath": "city=a", "policy": "KEEP_LATEST_COMMITS", "deletePathPatterns": [NAME],
             "successDeleteFiles": [NAME], "failedDeleteFiles": [], "isPartitionDeleted": False}
CLEAN_PARTITION = CleanPartitionMetadata(partition_path="city=a", policy="KEEP_LATEST_COMMITS",
                                         delete_path_patterns=(NAME,), success_delete_files=(NAME,))
READ_AS = [
    ("HoodieCleanerPlan", {
        "earliestInstantToRetain": {"timestamp": "20250101000000000", "action": "commit", "state": "COMPLETED"},
        "lastCompletedCommitTimestamp": "20250101000500000", "policy": "KEEP_LATEST_COMMITS",
        "filesToBeDeletedPerPartition": {}, "version": 2,
        "filePathsToBeDeletedPerPartition": {"city=a": [{"filePath": PATH, "isBootstrapBaseFile": False}], "": []},
        "partitionsToBeDeleted": ["city=gone"], "extraMetadata": {"savepointed_timestamps": ""},
    }, CleanerPlan(
        earliest_instant_to_retain=ActionInstant(timestamp="20250101000000000", action="commit", state="COMPLETED"),
        last_completed_commit_timestamp="20250101000500000", policy="KEEP_LATEST_COMMITS",
        file_paths_to_be_deleted_per_partition={"city=a": (CleanFileInfo(file_path=PATH),), "": ()},
        partitions_to_be_deleted=("city=gone",), extra_metadata={"savepointed_timestamps": ""},
    )),
    ("HoodieCleanMetadata", {
        "startCleanTime": "20250101000600000", "timeTakenInMillis": 12, "totalFilesDeleted": 1,
        "earliestCommitToRetain": "20250101000000000", "lastCompletedCommitTimestamp": "20250101000500000",
        "partitionMetadata": {"city=a": PARTITION}, "version": 2, "bootstrapPartitionMetadata": {"city=a": PARTITION},
        "extraMetadata": None,
    }, CleanMetadata(
        start_clean_time="20250101000600000", time_taken_in_millis=12, total_files_deleted=1,
        earliest_commit_to_retain="20250101000000000", last_completed_commit_timestamp="20250101000500000",
        partition_metadata={"city=a": CLEAN_PARTITION}, bootstrap_partition_metadata={"city=a": CLEAN_PARTITION},
    )),
    ("HoodieSavepointMetadata", {
        "savepointedBy": "hudi-ops", "savepointedAt": 1735689600, "comments": "before backfill",
        "partitionMetadata": {"": {"partitionPath": "", "savepointDataFile": ["a.parquet"]}}, "version": 1,
    }, SavepointMetadata(
        savepointed_by="hudi-ops", savepointed_at=1735689600, comments="before backfill",
        partition_metadata={"": SavepointPartitionMetadata(partition_path="", savepoint_data_file=("a.parquet",))},
    )),
    ("HoodieRollbackPlan", ROLLBACK_PLAN, RollbackPlan(
        instant_to_rollback=InstantInfo(commit_time="20250101000000000", action="commit"))),
]


@pytest.mark.parametrize(("name", "record", "expected"), READ_AS, ids=[r[0] for r in READ_AS])
def test_records_without_fixtures_read_as_written(name: str, record: dict[str, Any], expected: object) -> None:
    assert type(expected).from_avro_bytes(container(name, record)) == expected  # type: ignore[attr-defined]
