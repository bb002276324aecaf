"""Every timeline file of the real Spark-written fixture tables, read.

The zips are read in memory once per session (nothing is unpacked to disk). Every commit, plan and
rollback file must read into its dataclass field for field as fastavro reads the record (v6 JSON
commits as `json` reads them), and the files with known content must say what the catalogue says.
"""

from __future__ import annotations

import dataclasses
import io
import json
import posixpath
import zipfile
from dataclasses import dataclass
from typing import Any

import fastavro
import pytest

from hudi_ops.errors import InvalidTableError
from hudi_ops.format.avro_container import MAGIC, avro_name, read_single_record
from hudi_ops.format.commit_metadata import NULL_COMMIT, CommitMetadata, RuntimeStats, WriteStat
from hudi_ops.format.instant import Action, Instant, State
from hudi_ops.format.plans import (
    CompactionPlan,
    InstantInfo,
    RequestedReplaceMetadata,
    RollbackMetadata,
    RollbackPartitionMetadata,
    RollbackPlan,
    RollbackRequest,
)
from tests.shared_data import FIXTURES, REFERENCE

PLAN_TYPES = {c.SCHEMA: c for c in (CompactionPlan, RequestedReplaceMetadata, RollbackPlan, RollbackMetadata)}
COMMIT_RECORDS = ("HoodieCommitMetadata", "HoodieReplaceCommitMetadata")


@dataclass(frozen=True)
class TimelineFile:
    table: str  # zip path below the fixtures folder, without .zip
    path: str  # member path inside the zip
    data: bytes

    @property
    def name(self) -> str:
        return posixpath.basename(self.path)

    @property
    def instant(self) -> Instant:
        return Instant.parse(self.name)

    @property
    def table_version(self) -> int:
        return int(posixpath.basename(self.table)[1])

    @property
    def record_name(self) -> str | None:
        if not self.data.startswith(MAGIC):
            return None
        return json.loads(fastavro.reader(io.BytesIO(self.data)).metadata["avro.schema"])["name"]


@pytest.fixture(scope="session")
def timeline() -> list[TimelineFile]:
    """Instant files of every fixture table and of their metadata tables."""
    files = []
    for zip_path in sorted(FIXTURES.rglob("*.zip")):
        table = str(zip_path.relative_to(FIXTURES).with_suffix(""))
        with zipfile.ZipFile(zip_path) as zf:
            for info in zf.infolist():
                folder, name = posixpath.split(info.filename)
                if info.is_dir() or info.filename.startswith("__MACOSX/"):
                    continue
                if folder.endswith(("/.hoodie", "/.hoodie/timeline")) and Instant.try_parse(name):
                    files.append(TimelineFile(table, info.filename, zf.read(info)))
    return files


@pytest.fixture(scope="session")
def avro_files(timeline: list[TimelineFile]) -> list[TimelineFile]:
    return [f for f in timeline if f.data.startswith(MAGIC)]


def _one(timeline: list[TimelineFile], table: str, name: str, *, mdt: bool = False) -> bytes:
    (hit,) = [
        f for f in timeline if f.table.endswith(table) and f.name == name and ("/metadata/" in f.path) == mdt
    ]
    return hit.data


#: what Jackson writes into v6 log write stats besides the fields: an empty Option of column stats
_IGNORED_JSON_KEYS = frozenset({"recordsStats"})


def differences(ours: Any, raw: Any, path: str = "") -> list[str]:
    """Where a read dataclass and the record a plain reader sees disagree. A null where the dataclass
    allows none reads as the field's default; a replace commit's null replaced-ids map reads as {}."""
    if dataclasses.is_dataclass(ours):
        fields = {avro_name(f): f for f in dataclasses.fields(ours)}
        out = []
        for key, value in raw.items():
            f = fields.get(key)
            if f is None:
                out += [] if key in _IGNORED_JSON_KEYS else [f"{path}.{key}: not read"]
                continue
            got = getattr(ours, f.name)
            if value is None and got is not None:
                default = f.default_factory() if f.default_factory is not dataclasses.MISSING else f.default
                replace_ids = key == "partitionToReplaceFileIds" and got == {}
                out += [] if got == default or replace_ids else [f"{path}.{key}: {got!r} for null"]
                continue
            out += differences(got, value, f"{path}.{key}")
        return out
    if isinstance(ours, tuple) and isinstance(raw, list) and len(ours) == len(raw):
        return [d for i, (o, r) in enumerate(zip(ours, raw, strict=True)) for d in differences(o, r, f"{path}[{i}]")]
    if isinstance(ours, dict) and isinstance(raw, dict) and ours.keys() == raw.keys():
        return [d for k in ours for d in differences(ours[k], raw[k], f"{path}[{k!r}]")]
    return [] if ours == raw else [f"{path}: {ours!r} != {raw!r}"]


def totals(meta: CommitMetadata) -> tuple[int, int, int, int]:
    """(writes, inserts, update writes, deletes) over every write stat."""
    stats = list(meta.write_stats())
    return (sum(s.num_writes for s in stats), sum(s.num_inserts for s in stats),
            sum(s.num_update_writes for s in stats), sum(s.num_deletes for s in stats))


# --- every file ----------------------------------------------------------------------------------


def test_inventory(timeline: list[TimelineFile], avro_files: list[TimelineFile]) -> None:
    assert len({f.table for f in timeline}) == 44  # 47 zips; the three *_empty tables have no instants
    assert len(avro_files) >= 900
    assert {f.table_version for f in avro_files} == {6, 8, 9}
    # JSON only in v6 tables, Avro everywhere from v8 on
    assert all(f.data.startswith(MAGIC) for f in timeline if f.table_version >= 8 and f.data)


def test_avro_files_are_one_record_containers_as_java_writes_them(avro_files: list[TimelineFile]) -> None:
    for f in avro_files:
        reader = fastavro.reader(io.BytesIO(f.data))
        assert list(reader.metadata) == ["avro.schema"], f.path  # the null codec goes unnamed
        assert len(list(reader)) == 1, f.path
        assert read_single_record(f.data) is not None


def test_commit_metadata_files_read_as_fastavro_reads_them(avro_files: list[TimelineFile]) -> None:
    count = 0
    for f in avro_files:
        if f.record_name not in COMMIT_RECORDS:
            continue
        count += 1
        meta = CommitMetadata.parse(f.data)
        assert meta.is_replace == (f.record_name == "HoodieReplaceCommitMetadata"), f.path
        (record,) = fastavro.reader(io.BytesIO(f.data))
        assert differences(meta, record) == [], f.path
    assert count == 831


def test_plan_files_read_as_fastavro_reads_them(avro_files: list[TimelineFile]) -> None:
    counts: dict[str, int] = {}
    for f in avro_files:
        name = f.record_name
        if name not in PLAN_TYPES:
            continue
        counts[name] = counts.get(name, 0) + 1
        plan = PLAN_TYPES[name].from_avro_bytes(f.data)
        (record,) = fastavro.reader(io.BytesIO(f.data))
        assert differences(plan, record) == [], f.path
    assert counts == {"HoodieCompactionPlan": 17, "HoodieRequestedReplaceMetadata": 24,
                      "HoodieRollbackPlan": 3, "HoodieRollbackMetadata": 3}


def test_v6_json_commits_read_as_json_reads_them(timeline: list[TimelineFile]) -> None:
    json_files = [f for f in timeline if f.data.lstrip().startswith(b"{")]
    assert len(json_files) == 56
    assert {f.table_version for f in json_files} == {6}
    for f in json_files:
        assert differences(CommitMetadata.parse(f.data), json.loads(f.data)) == [], f.path


def test_empty_files_are_empty_metadata(timeline: list[TimelineFile]) -> None:
    empty = [f for f in timeline if not f.data]
    assert {f.instant.state for f in empty} == {State.REQUESTED, State.INFLIGHT}
    for f in empty:
        assert CommitMetadata.parse(f.data) == CommitMetadata()
        assert read_single_record(f.data) is None


# --- known values (hudi-v8.md §2, hudi-rs-oracle.md §4) ------------------------------------------


def test_v8_cow_insert_then_upsert(timeline: list[TimelineFile]) -> None:
    table = "cow/v8_nonpartitioned"
    fid = "2746610d-ad02-4adb-a038-5cbb99cbd455-0"
    first = CommitMetadata.parse(_one(timeline, table, "20250713010535797_20250713010536200.commit"))
    assert first.operation_type == "UPSERT"
    assert first.version is None and first.compacted is False
    assert json.loads(first.extra_metadata["schema"])["name"] == "v8_nonpartitioned_record"
    (stat,) = first.partition_to_write_stats[""]
    assert stat == WriteStat(
        file_id=fid, path=f"{fid}_0-54-79_20250713010535797.parquet", prev_commit=NULL_COMMIT, num_writes=3,
        total_write_bytes=441374, partition_path="", num_inserts=3, file_size_in_bytes=441374,
        runtime_stats=RuntimeStats(total_create_time=76),
    )
    assert not stat.is_log_write

    second = CommitMetadata.parse(_one(timeline, table, "20250713010536861_20250713010537206.commit"))
    (stat,) = second.write_stats()
    assert stat.prev_commit == "20250713010535797"
    assert stat.prev_base_file == f"{fid}_0-54-79_20250713010535797.parquet"
    assert totals(second) == (4, 1, 1, 0)
    assert (stat.total_write_bytes, stat.path) == (441515, f"{fid}_0-75-100_20250713010536861.parquet")

    # inflight "workload profile": new rows under fileId "", updates under the file group they hit
    profile = CommitMetadata.parse(_one(timeline, table, "20250713010536861.inflight"))
    new_rows, updates = profile.partition_to_write_stats[""]
    assert (new_rows.file_id, new_rows.num_inserts, new_rows.path) == ("", 1, None)
    assert (updates.file_id, updates.prev_commit, updates.num_update_writes) == (fid, "20250713010535797", 1)
    assert profile.extra_metadata == {}
    assert [s.path for s in profile.write_stats()] == [None, None]  # a plan of the write, no files yet


def test_v8_mor_log_append_and_compaction(timeline: list[TimelineFile]) -> None:
    table = "mor/avro/v8_trips_8i3u1d"
    upsert = CommitMetadata.parse(_one(timeline, table, "20251220210123755_20251220210124336.deltacommit"))
    assert upsert.operation_type == "UPSERT_PREPPED"
    assert upsert.extra_metadata["_hoodie.spark.sql.writes.prepped"] == "true"
    (stat,) = upsert.partition_to_write_stats["city=san_francisco"]
    log = ".036ded81-9ed4-479f-bcea-7145dfa0079b-0_20251220210123755.log.1_0-1022-2928"
    assert stat.is_log_write
    assert stat.path == f"city=san_francisco/{log}"
    assert stat.prev_commit == "20251220210123755"  # v8: the deltacommit itself
    assert (stat.base_file, stat.log_files, stat.log_version, stat.log_offset) == ("", (log,), 1, 0)
    assert (stat.num_writes, stat.num_update_writes, stat.file_size_in_bytes) == (1, 1, 1153)

    delete = CommitMetadata.parse(_one(timeline, table, "20251220210125441_20251220210126002.deltacommit"))
    assert (delete.operation_type, totals(delete)[3], totals(delete)[0]) == ("DELETE_PREPPED", 1, 0)

    compaction = CommitMetadata.parse(_one(timeline, table, "20251220210129235_20251220210129883.commit"))
    assert compaction.compacted is True and compaction.operation_type == "COMPACT"
    cities = {"city=san_francisco", "city=sao_paulo", "city=chennai"}
    assert set(compaction.partition_to_write_stats) == cities
    (sf,) = compaction.partition_to_write_stats["city=san_francisco"]
    assert sf.prev_commit == "20251220210108078"
    assert sf.prev_base_file == "036ded81-9ed4-479f-bcea-7145dfa0079b-0_0-986-2792_20251220210108078.parquet"
    assert (sf.total_log_records, sf.total_log_blocks, sf.total_log_files_compacted) == (1, 1, 1)
    assert (sf.total_log_size_compacted, sf.total_updated_records_compacted) == (1153, 1)

    plan = CompactionPlan.from_avro_bytes(_one(timeline, table, "20251220210129235.compaction.requested"))
    assert plan.version == 2 and plan.preserve_hoodie_metadata is False
    (chennai,) = [op for op in plan.operations or () if op.partition_path == "city=chennai"]
    fid = "6e1d5cc4-c487-487d-abbe-fe9b30b1c0cc-0"
    assert chennai.file_id == fid and chennai.base_instant_time == "20251220210108078"
    assert chennai.data_file_path == f"{fid}_2-986-2794_20251220210108078.parquet"
    assert chennai.delta_file_paths == (
        f".{fid}_20251220210127080.log.1_0-1072-3078", f".{fid}_20251220210128625.log.1_0-1097-3150",
    )
    assert chennai.metrics is not None and chennai.metrics["TOTAL_LOG_FILES"] == 2.0


def test_v8_metadata_table_commits(timeline: list[TimelineFile]) -> None:
    mdt = [f for f in timeline if "/metadata/" in f.path and f.table.endswith("v8_trips_8i3u1d")]
    ops = {CommitMetadata.parse(f.data).operation_type for f in mdt if f.instant.is_completed
           and f.instant.action in Action.WRITE_ACTIONS}
    assert ops == {"BULK_INSERT", "UPSERT_PREPPED", "COMPACT"}


def test_v9_insert_overwrite_table(timeline: list[TimelineFile]) -> None:
    table = "cow/v9_txns_simple_overwrite"
    meta = CommitMetadata.parse(_one(timeline, table, "20260403184001282_20260403184002260.replacecommit"))
    assert meta.is_replace and meta.operation_type == "INSERT_OVERWRITE_TABLE"
    assert meta.partition_to_replace_file_ids == {
        "apac": ("f2076acb-430a-4060-b14d-8ed7663b5cbd-0",),
        "us": ("fbafeb04-7261-477e-a460-b8643e7fd468-0", "ee8187cb-0d8f-41b5-9065-2abd51759ba0-0"),
        "eu": ("1a30abf3-e08b-429b-bcca-73d32ce8754f-0", "edc44bf5-7467-412e-9395-4b5646ee26c4-0"),
    }
    assert totals(meta)[1] == 3  # TXN-101..103
    requested = RequestedReplaceMetadata.from_avro_bytes(
        _one(timeline, table, "20260403184001282.replacecommit.requested")
    )
    assert requested == RequestedReplaceMetadata()  # all four fields null
    inflight = CommitMetadata.parse(_one(timeline, table, "20260403184001282.replacecommit.inflight"))
    assert not inflight.is_replace  # the inflight holds a plain HoodieCommitMetadata


def test_v9_clustering_plan_and_commit(timeline: list[TimelineFile]) -> None:
    table = "mor/avro/v9_txns_simple_nometa"
    requested = RequestedReplaceMetadata.from_avro_bytes(
        _one(timeline, table, "20260307135840454.clustering.requested")
    )
    assert requested.operation_type == "CLUSTER" and requested.version == 1
    plan = requested.clustering_plan
    assert plan is not None and plan.strategy is not None
    assert plan.strategy.strategy_class_name.endswith("SparkSortAndSizeExecutionStrategy")
    assert plan.preserve_hoodie_metadata is True
    slices = [s for g in plan.input_groups or () for s in g.slices or ()]
    assert {s.partition_path for s in slices} == {"region=apac", "region=eu", "region=us"}
    assert all(s.delta_file_paths == () and s.bootstrap_file_path == "" for s in slices)

    done = CommitMetadata.parse(_one(timeline, table, "20260307135840454_20260307135840902.replacecommit"))
    assert done.operation_type == "CLUSTER" and done.is_replace
    replaced = {fid for ids in (done.partition_to_replace_file_ids or {}).values() for fid in ids}
    assert replaced == {s.file_id for s in slices}


def test_v9_rollback(timeline: list[TimelineFile]) -> None:
    table = "mor/avro/v9_nonpartitioned_rollback"
    path = ("/opt/data/warehouse/v9_nonpartitioned_rollback_mor/"
            "cefd0149-a1ea-4981-abda-34e0b9d9ef12-0_0-33-86_20260403184242950.parquet")
    target = InstantInfo(commit_time="20260403184242950", action="deltacommit")
    plan = RollbackPlan.from_avro_bytes(_one(timeline, table, "20260403184259077.rollback.requested"))
    assert plan == RollbackPlan(
        instant_to_rollback=target,
        rollback_requests=(RollbackRequest(partition_path="", files_to_be_deleted=(path,)),),
    )
    done = RollbackMetadata.from_avro_bytes(
        _one(timeline, table, "20260403184259077_20260403184300219.rollback")
    )
    assert done == RollbackMetadata(
        start_rollback_time="20260403184259077", time_taken_in_millis=195, total_files_deleted=1,
        commits_rollback=("20260403184242950",),
        partition_metadata={"": RollbackPartitionMetadata(partition_path="", success_delete_files=(path,))},
        instants_rollback=(target,),
    )


def test_v6_rollback_of_a_log_write(timeline: list[TimelineFile]) -> None:
    table = "mor/parquet/v6_nonpartitioned_rollback"
    plan = RollbackPlan.from_avro_bytes(_one(timeline, table, "20250126040936578.rollback.requested"))
    _, log_request = plan.rollback_requests or ()
    assert log_request.file_id == "0712b9f9-d2d5-4cae-bcf4-8fd7146af503-0"
    assert log_request.latest_base_instant == "20250126040823628"
    assert log_request.files_to_be_deleted == ()
    assert list((log_request.log_blocks_to_be_deleted or {}).values()) == [11828]


def test_v6_json_commits(timeline: list[TimelineFile]) -> None:
    meta = CommitMetadata.parse((FIXTURES / "core-tests-data/commit_metadata/v6_commit.json").read_bytes())
    (stat,) = meta.partition_to_write_stats[""]
    assert stat.file_id == "a079bdb3-731c-4894-b855-abfcd6921007-0"
    assert (stat.prev_commit, stat.num_writes, stat.num_update_writes, stat.num_inserts) == (
        "20240418173550988", 4, 1, 1)
    assert stat.runtime_stats == RuntimeStats(total_upsert_time=105)
    assert meta.version is None and meta.extra_metadata["schema"]

    # v6 MOR delete (hudi-format.md §2.4): log stats list the slice's base file and log files
    delete = CommitMetadata.parse(_one(timeline, "mor/avro/v6_trips_8i3d", "20250618054714114.deltacommit"))
    assert (delete.operation_type, totals(delete)[3]) == ("DELETE_PREPPED", 3)  # riders A, C, D
    (stat,) = delete.partition_to_write_stats["city=san_francisco"]
    assert stat.base_file == "6d3d1d6e-2298-4080-a0c1-494877d6f40a-0_0-13-60_20250618054711154.parquet"
    assert stat.log_files == (".6d3d1d6e-2298-4080-a0c1-494877d6f40a-0_20250618054711154.log.1_0-26-85",)

    overwrite = CommitMetadata.parse(
        _one(timeline, "cow/v6_simplekeygen_nonhivestyle_overwritetable", "20240707001303088.replacecommit")
    )
    assert overwrite.is_replace and overwrite.operation_type == "INSERT_OVERWRITE_TABLE"
    assert set(overwrite.partition_to_replace_file_ids or {}) == {"10", "20", "30"}


def test_standalone_v8_deltacommit() -> None:
    data = (FIXTURES / "core-tests-data/commit_metadata/v8_deltacommit.avro").read_bytes()
    meta = CommitMetadata.parse(data)
    (record,) = fastavro.reader(io.BytesIO(data))
    assert differences(meta, record) == []
    # the first insert of the trips table: 8 trips into 3 city partitions
    assert (meta.operation_type, totals(meta)[1], len(meta.partition_to_write_stats)) == ("UPSERT", 8, 3)
    assert all(s.path for s in meta.write_stats())


# --- edge cases ----------------------------------------------------------------------------------


def test_parse_edge_cases(timeline: list[TimelineFile]) -> None:
    assert CommitMetadata.parse(b"") == CommitMetadata.parse(b"  \n") == CommitMetadata()
    with pytest.raises(InvalidTableError, match="neither Avro nor JSON"):
        CommitMetadata.parse(b"\x00garbage")
    with pytest.raises(InvalidTableError, match="not an object"):
        CommitMetadata.parse(b"[]")
    with pytest.raises(InvalidTableError, match="no commit metadata"):
        CommitMetadata.parse(
            _one(timeline, "mor/avro/v9_nonpartitioned_rollback", "20260403184259077.rollback.requested"))


def test_replace_commit_with_nothing_replaced_stays_a_replace_commit() -> None:
    schema = json.loads((REFERENCE / "v8-schemas/HoodieReplaceCommitMetadata.avsc").read_text())
    buf = io.BytesIO()
    record = {"partitionToWriteStats": {}, "compacted": False, "extraMetadata": {}, "version": None,
              "operationType": "INSERT_OVERWRITE", "partitionToReplaceFileIds": {}}
    fastavro.writer(buf, fastavro.parse_schema(schema), [record])
    expected = CommitMetadata(operation_type="INSERT_OVERWRITE", partition_to_replace_file_ids={})
    assert CommitMetadata.parse(buf.getvalue()) == expected
    assert CommitMetadata.parse(json.dumps(record).encode()) == expected  # v6 JSON
    null_ids = json.dumps({"partitionToWriteStats": {}, "partitionToReplaceFileIds": None}).encode()
    assert CommitMetadata.parse(null_ids).is_replace
