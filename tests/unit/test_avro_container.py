"""One-record Avro containers, the bundled Hudi schemas, and the dataclass <-> record mapping."""

from __future__ import annotations

import io
import json
from pathlib import Path

import fastavro
import pytest

from hudi_ops.errors import InvalidTableError
from hudi_ops.format.avro_container import (
    MAGIC,
    avro_name,
    from_avro_record,
    load_schema,
    read_single_record,
    to_avro_record,
    write_single_record,
)
from hudi_ops.format.plans import (
    ActionInstant,
    CleanerPlan,
    CleanFileInfo,
    CleanMetadata,
    CleanPartitionMetadata,
    RollbackPlan,
    RollbackRequest,
    SavepointMetadata,
    SavepointPartitionMetadata,
)
from tests.shared_data import SHARED

FIXTURES = SHARED / "fixtures/hudi-rs/core-tests-data/commit_metadata"
REFERENCE_SCHEMAS = SHARED / "reference/v8-schemas"
_HEADER = {
    "type": "record", "name": "Header", "fields": [
        {"name": "magic", "type": {"type": "fixed", "name": "Magic", "size": 4}},
        {"name": "meta", "type": {"type": "map", "values": "bytes"}},
        {"name": "sync", "type": {"type": "fixed", "name": "Sync", "size": 16}},
    ],
}
BUNDLED = (
    "HoodieCommitMetadata", "HoodieReplaceCommitMetadata", "HoodieRequestedReplaceMetadata",
    "HoodieCompactionPlan", "HoodieRollbackPlan", "HoodieRollbackMetadata", "HoodieCleanerPlan",
    "HoodieCleanMetadata", "HoodieSavepointMetadata",
)


@pytest.mark.parametrize("name", BUNDLED)
def test_bundled_schema_is_one_line_named_record(name: str) -> None:
    text, parsed = load_schema(name)
    assert "\n" not in text
    assert parsed["name"] == f"org.apache.hudi.avro.model.{name}"
    assert json.loads(text)["namespace"] == "org.apache.hudi.avro.model"
    assert load_schema(name) is load_schema(name)  # cached


@pytest.mark.parametrize(
    "path",
    [p for p in sorted(REFERENCE_SCHEMAS.glob("*.avsc")) if not p.stem.startswith("HoodieIndex")],
    ids=lambda p: p.stem,
)
def test_bundled_schemas_equal_the_ones_real_tables_embed(path: Path) -> None:
    assert load_schema(path.stem)[0] == path.read_text().strip()


def test_unknown_schema_name() -> None:
    with pytest.raises(ValueError, match="HoodieNope"):
        load_schema("HoodieNope")


def test_rebuilds_a_java_written_file_byte_for_byte() -> None:
    data = (FIXTURES / "v8_deltacommit.avro").read_bytes()
    reader = fastavro.reader(io.BytesIO(data))
    record = next(reader)
    rebuilt = write_single_record(reader.metadata["avro.schema"], record, _sync=data[-16:])
    assert rebuilt == data


def test_container_layout() -> None:
    """magic, header map with only avro.schema (Java omits avro.codec for null), sync, one block, sync."""
    schema_json, _ = load_schema("HoodieRollbackPlan")
    data = write_single_record(schema_json, to_avro_record(RollbackPlan()))
    buf = io.BytesIO(data)
    header = fastavro.schemaless_reader(buf, _HEADER, None)
    assert header["magic"] == MAGIC
    assert header["meta"] == {"avro.schema": schema_json.encode()}
    assert fastavro.schemaless_reader(buf, "long", None) == 1  # records in the block
    size = fastavro.schemaless_reader(buf, "long", None)
    buf.read(size)
    assert buf.read() == header["sync"]
    other = write_single_record(schema_json, to_avro_record(RollbackPlan()))
    assert other[-16:] != data[-16:]  # random sync marker


def test_bad_sync_length() -> None:
    with pytest.raises(ValueError, match="16 bytes"):
        write_single_record(load_schema("HoodieRollbackPlan")[0], to_avro_record(RollbackPlan()), _sync=b"x")


def test_read_empty_is_none() -> None:
    assert read_single_record(b"") is None


def test_read_rejects_non_avro_and_garbage() -> None:
    with pytest.raises(InvalidTableError, match="not an Avro container"):
        read_single_record(b'{"partitionToWriteStats": {}}')
    good = write_single_record(load_schema("HoodieRollbackPlan")[0], to_avro_record(RollbackPlan()))
    with pytest.raises(InvalidTableError, match="corrupt"):
        read_single_record(good[:-30])


def test_read_checks_record_type() -> None:
    data = write_single_record(load_schema("HoodieRollbackPlan")[0], to_avro_record(RollbackPlan()))
    assert read_single_record(data, expect="HoodieRollbackPlan") is not None
    with pytest.raises(InvalidTableError, match="expected an Avro HoodieCleanerPlan record"):
        read_single_record(data, expect="HoodieCleanerPlan")
    with pytest.raises(InvalidTableError, match="empty file"):
        CleanerPlan.from_avro_bytes(b"")


def test_read_rejects_two_records() -> None:
    parsed = load_schema("HoodieRollbackPlan")[1]
    buf = io.BytesIO()
    fastavro.writer(buf, parsed, [to_avro_record(RollbackPlan())] * 2)
    with pytest.raises(InvalidTableError, match="found 2"):
        read_single_record(buf.getvalue())


def test_avro_names() -> None:
    import dataclasses

    names = {f.name: avro_name(f) for f in dataclasses.fields(RollbackPlan)}
    assert names == {"instant_to_rollback": "instantToRollback", "rollback_requests": "RollbackRequests",
                     "version": "version"}


def test_from_record_fills_defaults_for_missing_and_null() -> None:
    request = from_avro_record(RollbackRequest, {"partitionPath": "p", "filesToBeDeleted": None})
    assert request == RollbackRequest(partition_path="p")  # non-nullable null -> default
    with pytest.raises(InvalidTableError, match="RollbackRequest"):
        from_avro_record(RollbackRequest, {})


def _clean_plan() -> CleanerPlan:
    return CleanerPlan(
        earliest_instant_to_retain=ActionInstant(
            timestamp="20250101000000000", action="commit", state="COMPLETED"
        ),
        last_completed_commit_timestamp="20250101000500000",
        policy="KEEP_LATEST_COMMITS",
        file_paths_to_be_deleted_per_partition={
            "city=a": (CleanFileInfo(file_path="/t/city=a/f1-0_0-1-1_20241231000000000.parquet"),),
            "": (),
        },
        partitions_to_be_deleted=("city=gone",),
        extra_metadata={"savepointed_timestamps": ""},
    )


def _clean_metadata() -> CleanMetadata:
    part = CleanPartitionMetadata(
        partition_path="city=a", policy="KEEP_LATEST_COMMITS",
        delete_path_patterns=("f1-0_0-1-1_20241231000000000.parquet",),
        success_delete_files=("f1-0_0-1-1_20241231000000000.parquet",),
    )
    return CleanMetadata(
        start_clean_time="20250101000600000", time_taken_in_millis=12, total_files_deleted=1,
        earliest_commit_to_retain="20250101000000000", last_completed_commit_timestamp="20250101000500000",
        partition_metadata={"city=a": part}, bootstrap_partition_metadata={"city=a": part},
    )


def _savepoint() -> SavepointMetadata:
    return SavepointMetadata(
        savepointed_by="hudi-ops", savepointed_at=1735689600, comments="before backfill",
        partition_metadata={
            "": SavepointPartitionMetadata(partition_path="", savepoint_data_file=("a.parquet",)),
        },
    )


@pytest.mark.parametrize("make", [_clean_plan, _clean_metadata, _savepoint], ids=lambda f: f.__name__)
def test_records_without_fixtures_round_trip(make) -> None:  # type: ignore[no-untyped-def]
    obj = make()
    data = obj.to_avro_bytes()
    assert type(obj).from_avro_bytes(data) == obj
    # plain fastavro with the bundled schema as reader schema sees the same record
    reader_schema = load_schema(obj.SCHEMA)[1]
    (record,) = fastavro.reader(io.BytesIO(data), reader_schema=reader_schema)
    assert record == to_avro_record(obj)


def test_clean_plan_avro_shape() -> None:
    record = read_single_record(_clean_plan().to_avro_bytes(), expect="HoodieCleanerPlan")
    assert record is not None
    assert record["version"] == 2  # CleanPlanner's current plan version
    assert record["filesToBeDeletedPerPartition"] == {}
    assert record["filePathsToBeDeletedPerPartition"]["city=a"] == [
        {"filePath": "/t/city=a/f1-0_0-1-1_20241231000000000.parquet", "isBootstrapBaseFile": False}
    ]
    assert record["earliestInstantToRetain"]["state"] == "COMPLETED"
