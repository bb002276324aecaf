"""The write client end to end on local tables: files on disk, operations, merging, packing, failures.

Expectations come from hudi-v8.md §1, §2.3, §5.2-5.3 and hudi-format.md §1.4-1.5, §5 (what Spark on
Hudi 1.0 writes), read back with fastavro / pyarrow directly rather than through hudi_ops, and from
hudi-rs, which must read the same rows as `table.read()` after every write.
"""

from __future__ import annotations

import io
import json
import re
import threading
import zlib
from collections import Counter
from pathlib import Path
from typing import Any

import fastavro
import hudi
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import hudi_ops.client.handles as handles_module
import hudi_ops.client.memory_planner as memory_planner_module
from hudi_ops import HudiTable
from hudi_ops.errors import ConfigError, HudiOpsError, InvalidInputError, TimelineError
from hudi_ops.storage import Storage

META = ("_hoodie_commit_time", "_hoodie_commit_seqno", "_hoodie_record_key", "_hoodie_partition_path",
        "_hoodie_file_name")
TIME = r"\d{17}"
BASE_FILE = re.compile(r"^(?P<fid>[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}-\d+)_"
                       r"(?P<tok>\d+-\d+-\d+)_(?P<t>\d{17})\.parquet$")
SCHEMA = pa.schema([("id", pa.int64()), ("ts", pa.int64()), ("city", pa.string()), ("v", pa.string())])
SMALL_BLOOM = {"hoodie.index.bloom.num_entries": "200"}  # small footers: fast writes, small files


# -- helpers ---------------------------------------------------------------------------------------


def rows(*items: tuple[int, int, str | None, str | None]) -> pa.Table:
    return pa.Table.from_pylist([dict(zip(("id", "ts", "city", "v"), r, strict=True)) for r in items], schema=SCHEMA)


def make_table(path: Path, **kw: Any) -> HudiTable:
    args: dict[str, Any] = {"name": "trips", "record_key": "id", "partition_fields": ["city"],
                            "ordering_field": "ts", "hive_style": True}
    args.update(kw)
    return HudiTable.create(path, **args)


def avro_record(path: Path) -> dict[str, Any]:
    records = list(fastavro.reader(io.BytesIO(path.read_bytes())))
    assert len(records) == 1, f"{path.name} holds {len(records)} records, expected 1"
    return records[0]


def timeline_dir(base: Path) -> Path:
    return base / ".hoodie" / "timeline"


def timeline_files(base: Path) -> list[str]:
    return sorted(p.name for p in timeline_dir(base).iterdir() if p.is_file())


def completed(base: Path) -> list[tuple[str, str]]:
    """(requested, completion) of every completed commit, in requested order."""
    out = []
    for name in timeline_files(base):
        m = re.fullmatch(rf"({TIME})_({TIME})\.commit", name)
        if m:
            out.append((m.group(1), m.group(2)))
    return out


def data_files(base: Path) -> list[Path]:
    return sorted(p for p in base.rglob("*.parquet") if ".hoodie" not in p.relative_to(base).parts)


def data_file_names(base: Path) -> set[str]:
    return {str(p.relative_to(base)) for p in data_files(base)}


def stats_by_partition(meta: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    return {p: list(v) for p, v in (meta["partitionToWriteStats"] or {}).items()}


def all_stats(meta: dict[str, Any]) -> list[dict[str, Any]]:
    return [s for v in stats_by_partition(meta).values() for s in v]


def commit_meta(base: Path, requested: str) -> dict[str, Any]:
    [(t, c)] = [x for x in completed(base) if x[0] == requested]
    return avro_record(timeline_dir(base) / f"{t}_{c}.commit")


def sort_rows(table: pa.Table, columns: list[str]) -> list[dict[str, Any]]:
    out = table.select(columns).to_pylist()
    return sorted(out, key=lambda r: tuple(str(r[c]) for c in columns))


def user_rows(table: HudiTable, columns: tuple[str, ...] = ("id", "ts", "city", "v")) -> list[dict[str, Any]]:
    return sort_rows(table.read(), list(columns))


def hudi_rs_table(base: Path) -> pa.Table | None:
    batches = hudi.HudiTable(str(base)).read()
    return pa.Table.from_batches(batches) if batches else None


def assert_hudi_rs_agrees(table: HudiTable) -> None:
    """hudi-rs returns the same rows (meta columns included) as `table.read()`."""
    ours = table.read()
    theirs = hudi_rs_table(Path(table.base_path.removeprefix("file://")))
    if theirs is None:
        assert ours.num_rows == 0
        return
    cols = ours.column_names
    assert set(cols) <= set(theirs.column_names), f"hudi-rs lacks {set(cols) - set(theirs.column_names)}"
    assert sort_rows(theirs, cols) == sort_rows(ours, cols)


def parse_properties(text: str) -> dict[str, str]:
    out = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        key, _, value = line.partition("=")
        out[key] = re.sub(r"\\(.)", r"\1", value)
    return out


def read_parquet(path: Path) -> pa.Table:
    return pq.read_table(path, partitioning=None)


def current_base_files(base: Path) -> dict[str, Path]:
    """file id -> newest base file (by instant in the name) among committed instants."""
    done = {t for t, _ in completed(base)}
    latest: dict[str, Path] = {}
    for p in data_files(base):
        m = BASE_FILE.match(p.name)
        assert m, f"bad base file name {p.name}"
        if m["t"] not in done:
            continue
        fid = m["fid"]
        if fid not in latest or BASE_FILE.match(latest[fid].name)["t"] < m["t"]:  # type: ignore[index]
            latest[fid] = p
    return latest


def leftovers(base: Path) -> list[str]:
    """Markers and heartbeats that must not survive a finished (committed or aborted) write."""
    out = [str(p.relative_to(base)) for p in (base / ".hoodie" / ".temp").rglob("*")]
    hb = base / ".hoodie" / ".heartbeat"
    if hb.exists():
        out += [str(p.relative_to(base)) for p in hb.iterdir()]
    return out


def snapshot_state(base: Path, table: HudiTable) -> tuple[list[str], set[str], list[dict[str, Any]]]:
    return timeline_files(base), data_file_names(base), sort_rows(table.read(), list(table.read().column_names))


# -- layout ----------------------------------------------------------------------------------------


def test_create_writes_properties_and_folders_but_no_instant(tmp_path: Path) -> None:
    base = tmp_path / "trips"
    make_table(base)
    for d in ("timeline", "timeline/history", ".temp", ".aux/.bootstrap/.partitions", ".aux/.bootstrap/.fileids",
              ".schema"):
        assert (base / ".hoodie" / d).is_dir(), d
    assert timeline_files(base) == []
    text = (base / ".hoodie" / "hoodie.properties").read_text()
    assert text.splitlines()[0].startswith("#") and text.splitlines()[1].startswith("#")
    props = parse_properties(text)
    assert props["hoodie.table.name"] == "trips"
    assert props["hoodie.table.type"] == "COPY_ON_WRITE"
    assert props["hoodie.table.version"] == "8"
    assert props["hoodie.table.initial.version"] == "8"
    assert props["hoodie.timeline.layout.version"] == "2"
    assert props["hoodie.timeline.path"] == "timeline"
    assert props["hoodie.table.timeline.timezone"] == "UTC"
    assert props["hoodie.table.recordkey.fields"] == "id"
    assert props["hoodie.table.partition.fields"] == "city"
    assert props["hoodie.table.precombine.field"] == "ts"
    assert props["hoodie.table.keygenerator.type"] == "SIMPLE"
    assert props["hoodie.datasource.write.hive_style_partitioning"] == "true"
    assert props["hoodie.datasource.write.drop.partition.columns"] == "false"
    assert props["hoodie.database.name"] == "default"
    assert props["hoodie.table.checksum"] == str(zlib.crc32(b"default.trips"))
    assert props["hoodie.record.merge.mode"] == "EVENT_TIME_ORDERING"
    assert props["hoodie.record.merge.strategy.id"] == "eeb8d96f-b1e4-49fd-bbf8-28ac514178e5"
    assert props["hoodie.compaction.payload.class"] == "org.apache.hudi.common.model.DefaultHoodieRecordPayload"
    assert not props.get("hoodie.table.metadata.partitions")
    assert "hoodie.table.keygenerator.class" not in props
    assert hudi_rs_table(base) is None  # hudi-rs opens it: an empty table


def test_commit_time_ordering_table_properties(tmp_path: Path) -> None:
    base = tmp_path / "t"
    make_table(base, ordering_field=None, record_key=["id", "v"], partition_fields=[])
    props = parse_properties((base / ".hoodie" / "hoodie.properties").read_text())
    assert props["hoodie.record.merge.mode"] == "COMMIT_TIME_ORDERING"
    assert props["hoodie.record.merge.strategy.id"] == "ce9acb64-bde0-424c-9b91-f6ebba25356d"
    assert props["hoodie.compaction.payload.class"] == (
        "org.apache.hudi.common.model.OverwriteWithLatestAvroPayload"
    )
    assert props["hoodie.table.keygenerator.type"] == "NON_PARTITION"
    assert "hoodie.table.partition.fields" not in props
    assert "hoodie.table.precombine.field" not in props


def test_first_insert_file_sequence(tmp_path: Path) -> None:
    base = tmp_path / "trips"
    table = make_table(base)
    result = table.insert(rows((1, 1, "sf", "a"), (2, 1, "sf", "b"), (3, 1, "nyc", "c")))
    t, c = result.instant_time, result.completion_time
    assert re.fullmatch(TIME, t) and re.fullmatch(TIME, c) and c > t
    assert timeline_files(base) == sorted([f"{t}.commit.requested", f"{t}.inflight", f"{t}_{c}.commit"])
    assert (timeline_dir(base) / f"{t}.commit.requested").stat().st_size == 0
    assert (result.operation, result.num_writes, result.num_inserts, result.num_updates) == ("INSERT", 3, 3, 0)

    # inflight: the workload profile
    inflight = avro_record(timeline_dir(base) / f"{t}.inflight")
    assert inflight["operationType"] == "INSERT"
    assert inflight["compacted"] is False and inflight["version"] is None and inflight["extraMetadata"] == {}
    profile = stats_by_partition(inflight)
    assert set(profile) == {"city=sf", "city=nyc"}
    for p, n in (("city=sf", 2), ("city=nyc", 1)):
        [s] = profile[p]
        assert (s["fileId"], s["prevCommit"], s["numInserts"], s["numUpdateWrites"]) == ("", "null", n, 0)
        assert s["path"] is None

    # completed commit: one stat per file
    meta = avro_record(timeline_dir(base) / f"{t}_{c}.commit")
    assert meta["operationType"] == "INSERT" and meta["compacted"] is False and meta["version"] is None
    schema = json.loads(meta["extraMetadata"]["schema"])
    assert schema["type"] == "record" and schema["name"] == "trips_record" and schema["namespace"] == "hoodie.trips"
    assert [f["name"] for f in schema["fields"]] == ["id", "ts", "city", "v"]  # no _hoodie_* fields
    stats = stats_by_partition(meta)
    assert set(stats) == {"city=sf", "city=nyc"}
    files = data_files(base)
    assert len(files) == 2
    for p, n in (("city=sf", 2), ("city=nyc", 1)):
        [s] = stats[p]
        [f] = [f for f in files if f.parent.name == p]
        m = BASE_FILE.match(f.name)
        assert m and m["t"] == t and m["fid"] == s["fileId"]
        assert s["path"] == f"{p}/{f.name}"
        assert s["partitionPath"] == p
        assert s["prevCommit"] == "null" and s["prevBaseFile"] is None
        assert (s["numWrites"], s["numInserts"], s["numUpdateWrites"], s["numDeletes"]) == (n, n, 0, 0)
        assert s["totalWriteBytes"] == s["fileSizeInBytes"] == f.stat().st_size

        # meta columns and footer
        data = read_parquet(f)
        assert data.column_names[:5] == list(META)
        assert set(data.column("_hoodie_commit_time").to_pylist()) == {t}
        seqnos = data.column("_hoodie_commit_seqno").to_pylist()
        task = m["tok"].split("-")[0]
        assert all(re.fullmatch(rf"{t}_{task}_\d+", s) for s in seqnos) and len(set(seqnos)) == n
        keys = data.column("_hoodie_record_key").to_pylist()
        assert keys == [str(i) for i in data.column("id").to_pylist()]
        assert set(data.column("_hoodie_partition_path").to_pylist()) == {p}
        assert set(data.column("_hoodie_file_name").to_pylist()) == {f.name}
        kv = pq.read_metadata(f).metadata
        assert kv[b"hoodie_bloom_filter_type_code"] == b"DYNAMIC_V0"
        assert kv[b"org.apache.hudi.bloomfilter"]
        assert kv[b"hoodie_min_record_key"].decode() == min(keys)
        assert kv[b"hoodie_max_record_key"].decode() == max(keys)

        pm = (base / p / ".hoodie_partition_metadata").read_text()
        assert pm.splitlines()[0] == "#partition metadata"
        assert parse_properties(pm) == {"commitTime": t, "partitionDepth": "1"}
    assert leftovers(base) == []
    assert_hudi_rs_agrees(table)


def test_upsert_rewrites_the_file_group(tmp_path: Path) -> None:
    base = tmp_path / "trips"
    table = make_table(base)
    first = table.upsert(rows((1, 1, "sf", "a"), (2, 1, "sf", "b"), (3, 1, "nyc", "c")))
    t1, c1 = first.instant_time, first.completion_time
    [old_sf] = [f for f in data_files(base) if f.parent.name == "city=sf"]
    [old_nyc] = [f for f in data_files(base) if f.parent.name == "city=nyc"]
    old_sf_rows = {r["id"]: r for r in read_parquet(old_sf).to_pylist()}
    fid_sf = BASE_FILE.match(old_sf.name)["fid"]  # type: ignore[index]

    # update 1, insert 4 (into the small sf file), insert 5 in a new partition; nyc untouched
    second = table.upsert(rows((1, 2, "sf", "A"), (4, 1, "sf", "d"), (5, 1, "la", "e")))
    t2, c2 = second.instant_time, second.completion_time
    assert t2 > c1 and c2 > t2
    assert (second.num_writes, second.num_inserts, second.num_updates, second.num_deletes) == (4, 2, 1, 0)
    names = timeline_files(base)
    assert len(names) == 6
    for t in (t1, t2):
        assert (timeline_dir(base) / f"{t}.commit.requested").stat().st_size == 0
        assert f"{t}.inflight" in names

    meta = commit_meta(base, t2)
    assert meta["operationType"] == "UPSERT"
    stats = stats_by_partition(meta)
    assert set(stats) == {"city=sf", "city=la"}
    [sf] = stats["city=sf"]
    [new_sf] = [f for f in data_files(base) if f.parent.name == "city=sf" and f != old_sf]
    m = BASE_FILE.match(new_sf.name)
    assert m and m["fid"] == fid_sf and m["t"] == t2
    assert sf["fileId"] == fid_sf and sf["path"] == f"city=sf/{new_sf.name}"
    assert sf["prevCommit"] == t1 and sf["prevBaseFile"] == old_sf.name
    assert (sf["numWrites"], sf["numUpdateWrites"], sf["numInserts"], sf["numDeletes"]) == (3, 1, 1, 0)
    assert sf["totalWriteBytes"] == sf["fileSizeInBytes"] == new_sf.stat().st_size
    [la] = stats["city=la"]
    assert la["prevCommit"] == "null" and (la["numWrites"], la["numInserts"]) == (1, 1)

    data = {r["id"]: r for r in read_parquet(new_sf).to_pylist()}
    assert set(data) == {1, 2, 4}
    assert set(r["_hoodie_file_name"] for r in data.values()) == {new_sf.name}
    # the copied row keeps its commit time and seqno, the written rows get T2
    assert data[2]["_hoodie_commit_time"] == t1
    assert data[2]["_hoodie_commit_seqno"] == old_sf_rows[2]["_hoodie_commit_seqno"]
    for i in (1, 4):
        assert data[i]["_hoodie_commit_time"] == t2 and data[i]["_hoodie_commit_seqno"].startswith(f"{t2}_")
    assert data[1]["v"] == "A" and data[1]["ts"] == 2
    assert old_sf.exists() and old_nyc.exists()  # the cleaner, not the writer, removes old slices
    assert parse_properties((base / "city=la" / ".hoodie_partition_metadata").read_text())["commitTime"] == t2
    assert parse_properties((base / "city=sf" / ".hoodie_partition_metadata").read_text())["commitTime"] == t1
    assert leftovers(base) == []
    assert user_rows(table) == [
        {"id": 1, "ts": 2, "city": "sf", "v": "A"}, {"id": 2, "ts": 1, "city": "sf", "v": "b"},
        {"id": 3, "ts": 1, "city": "nyc", "v": "c"}, {"id": 4, "ts": 1, "city": "sf", "v": "d"},
        {"id": 5, "ts": 1, "city": "la", "v": "e"},
    ]
    assert_hudi_rs_agrees(table)


def test_inflight_workload_profile_of_an_upsert_matches_spark(tmp_path: Path) -> None:
    """Per partition one `fileId ""` entry counting the partition's inserts (also those packed into
    a small file), plus one entry per existing file group counting its updates (fixtures
    v8_nonpartitioned and v8_simplekeygen_nonhivestyle, second instant)."""
    base = tmp_path / "trips"
    table = make_table(base)
    t1 = table.upsert(rows((1, 1, "sf", "a"), (2, 1, "sf", "b"), (3, 1, "nyc", "c"))).instant_time
    [old_sf] = [f for f in data_files(base) if f.parent.name == "city=sf"]
    fid_sf = BASE_FILE.match(old_sf.name)["fid"]  # type: ignore[index]
    t2 = table.upsert(rows((1, 2, "sf", "A"), (4, 1, "sf", "d"), (5, 1, "la", "e"))).instant_time
    inflight = avro_record(timeline_dir(base) / f"{t2}.inflight")
    assert inflight["operationType"] == "UPSERT" and inflight["extraMetadata"] == {}
    profile = stats_by_partition(inflight)
    assert set(profile) == {"city=sf", "city=la"}
    sf_new = [s for s in profile["city=sf"] if s["fileId"] == ""]
    sf_old = [s for s in profile["city=sf"] if s["fileId"] == fid_sf]
    assert len(profile["city=sf"]) == 2 and len(sf_new) == 1 and len(sf_old) == 1
    assert (sf_new[0]["prevCommit"], sf_new[0]["numInserts"]) == ("null", 1)
    assert (sf_old[0]["prevCommit"], sf_old[0]["numUpdateWrites"]) == (t1, 1)
    [la] = profile["city=la"]
    assert (la["fileId"], la["prevCommit"], la["numInserts"], la["numUpdateWrites"]) == ("", "null", 1, 0)


def test_completion_times_increase(tmp_path: Path) -> None:
    base = tmp_path / "t"
    table = make_table(base, **{"partition_fields": []})
    for i in range(4):
        table.upsert(rows((i, 1, "x", "v")), options=SMALL_BLOOM)
    done = completed(base)
    assert len(done) == 4
    seen: list[str] = []
    for t, c in done:
        assert all(t > s for s in seen) and c > t
        seen += [t, c]
    assert_hudi_rs_agrees(table)


# -- operations ------------------------------------------------------------------------------------


def test_insert_does_not_look_up_keys_and_duplicates_an_existing_key(tmp_path: Path, monkeypatch) -> None:
    base = tmp_path / "t"
    table = make_table(base)
    table.insert(rows((1, 1, "sf", "a"), (2, 1, "sf", "b")))

    def no_index(*a: Any, **k: Any) -> Any:
        raise AssertionError("insert must not look records up in the index")

    monkeypatch.setattr(memory_planner_module, "tag_locations", no_index)
    r = table.insert(rows((1, 5, "sf", "dup")))
    assert (r.num_inserts, r.num_updates) == (1, 0)
    ids = Counter(x["id"] for x in user_rows(table))
    assert ids == Counter({1: 2, 2: 1})
    monkeypatch.undo()
    # also with new file groups only
    table.insert(rows((2, 9, "sf", "dup2")), options={"hoodie.parquet.small.file.limit": "0"})
    assert Counter(x["id"] for x in user_rows(table)) == Counter({1: 2, 2: 2})
    assert_hudi_rs_agrees(table)


def test_bulk_insert_never_packs_into_small_files(tmp_path: Path) -> None:
    base = tmp_path / "t"
    table = make_table(base)
    table.upsert(rows((1, 1, "sf", "a"), (2, 1, "nyc", "b")))
    before = current_base_files(base)
    r = table.bulk_insert(rows((3, 1, "sf", "c"), (4, 1, "nyc", "d")))
    assert r.operation == "BULK_INSERT"
    meta = commit_meta(base, r.instant_time)
    assert meta["operationType"] == "BULK_INSERT"
    assert all(s["prevCommit"] == "null" and s["fileId"] not in before for s in all_stats(meta))
    after = current_base_files(base)
    assert len(after) == 4
    assert all(after[fid] == path for fid, path in before.items())  # existing groups untouched
    assert [x["id"] for x in user_rows(table)] == [1, 2, 3, 4]
    assert_hudi_rs_agrees(table)


def test_delete_by_key_and_partition(tmp_path: Path) -> None:
    base = tmp_path / "t"
    table = make_table(base)
    table.upsert(rows((1, 1, "sf", "a"), (2, 1, "sf", "b"), (3, 1, "nyc", "c"), (4, 1, "nyc", "d")))
    keys = pa.table({"id": [1, 3, 99, 4], "city": ["sf", "nyc", "sf", "sf"]})  # 99 missing; 4 is not in sf
    r = table.delete(keys)
    assert r.operation == "DELETE" and r.num_deletes == 2
    meta = commit_meta(base, r.instant_time)
    assert meta["operationType"] == "DELETE"
    assert sum(s["numDeletes"] for s in all_stats(meta)) == 2
    assert {s["partitionPath"]: s["numWrites"] for s in all_stats(meta)} == {"city=sf": 1, "city=nyc": 1}
    assert [x["id"] for x in user_rows(table)] == [2, 4]
    assert_hudi_rs_agrees(table)
    # deleting only missing keys changes nothing visible
    r = table.delete(pa.table({"id": [1, 42], "city": ["sf", "la"]}))
    assert r.num_deletes == 0
    assert [x["id"] for x in user_rows(table)] == [2, 4]
    assert_hudi_rs_agrees(table)
    # emptying a file group leaves an empty base file; the partition takes inserts again
    r = table.delete(pa.table({"id": [2], "city": ["sf"]}))
    assert [(s["numWrites"], s["numDeletes"]) for s in all_stats(commit_meta(base, r.instant_time))] == [(0, 1)]
    assert [x["id"] for x in user_rows(table)] == [4]
    assert_hudi_rs_agrees(table)
    table.upsert(rows((2, 3, "sf", "again")))
    assert {x["id"]: x["v"] for x in user_rows(table)} == {2: "again", 4: "d"}
    assert_hudi_rs_agrees(table)


def test_delete_needs_the_key_and_partition_columns(tmp_path: Path) -> None:
    base = tmp_path / "t"
    table = make_table(base)
    table.upsert(rows((1, 1, "sf", "a")))
    before = snapshot_state(base, table)
    with pytest.raises(InvalidInputError, match="city"):
        table.delete(pa.table({"id": [1]}))
    assert snapshot_state(base, table) == before


def test_soft_delete_with_hoodie_is_deleted(tmp_path: Path) -> None:
    base = tmp_path / "t"
    table = make_table(base)
    table.upsert(rows((1, 1, "sf", "a"), (2, 1, "sf", "b"), (3, 5, "sf", "c")))
    batch = rows((2, 2, "sf", "b"), (7, 2, "sf", "new-but-deleted"), (3, 4, "sf", "late"), (1, 2, "sf", "A"))
    batch = batch.append_column("_hoodie_is_deleted", pa.array([True, True, True, False]))
    r = table.upsert(batch)
    assert r.num_deletes == 1  # 2 is deleted; 7 never existed; the delete of 3 is late (ts 4 < 5) and loses
    assert sum(s["numDeletes"] for s in all_stats(commit_meta(base, r.instant_time))) == 1
    got = {x["id"]: x["v"] for x in user_rows(table)}
    assert got == {1: "A", 3: "c"}
    assert_hudi_rs_agrees(table)


def test_precombine_within_a_batch_event_time(tmp_path: Path) -> None:
    table = make_table(tmp_path / "t")
    r = table.upsert(rows(
        (1, 5, "sf", "ts5"), (1, 9, "sf", "ts9"), (1, 7, "sf", "ts7"),  # greatest ts wins
        (2, 3, "sf", "first"), (2, 3, "sf", "second"),  # tie: the later row wins
    ))
    assert r.num_writes == 2
    assert {x["id"]: x["v"] for x in user_rows(table)} == {1: "ts9", 2: "second"}
    assert_hudi_rs_agrees(table)


def test_precombine_within_a_batch_commit_time(tmp_path: Path) -> None:
    table = make_table(tmp_path / "t", merge_mode="COMMIT_TIME_ORDERING")
    table.upsert(rows((1, 5, "sf", "first"), (1, 9, "sf", "greatest"), (1, 2, "sf", "last")))
    assert {x["id"]: x["v"] for x in user_rows(table)} == {1: "last"}
    assert_hudi_rs_agrees(table)


@pytest.mark.parametrize("mode,late_wins", [("EVENT_TIME_ORDERING", False), ("COMMIT_TIME_ORDERING", True)])
def test_late_event_against_stored_rows(tmp_path: Path, mode: str, late_wins: bool) -> None:
    base = tmp_path / "t"
    table = make_table(base, merge_mode=mode)
    t1 = table.upsert(rows((1, 10, "sf", "stored"), (2, 10, "sf", "other"), (3, 10, "sf", "tie"))).instant_time
    r = table.upsert(rows((1, 5, "sf", "late"), (2, 11, "sf", "newer"), (3, 10, "sf", "tie-new")))
    got = {x["id"]: x for x in table.read().to_pylist()}
    assert got[2]["v"] == "newer" and got[2]["_hoodie_commit_time"] == r.instant_time
    assert got[3]["v"] == "tie-new"  # an equal ordering value: the incoming record wins, as in Hudi
    if late_wins:
        assert (got[1]["v"], got[1]["ts"], got[1]["_hoodie_commit_time"]) == ("late", 5, r.instant_time)
        assert r.num_updates == 3
    else:
        assert (got[1]["v"], got[1]["ts"], got[1]["_hoodie_commit_time"]) == ("stored", 10, t1)
        assert r.num_updates == 2
    assert_hudi_rs_agrees(table)


def test_without_combine_before_upsert_an_existing_key_still_has_one_record(tmp_path: Path) -> None:
    """With `hoodie.combine.before.upsert=false` Hudi skips the batch dedup; duplicates of a key that
    goes to an existing file group still collapse in the merge handle (its map of incoming records
    by key keeps the last one, which is then merged with the stored record), so the file group keeps
    one record per key. Duplicates of new keys written to a new file group are both kept."""
    base = tmp_path / "t"
    table = make_table(base)
    table.upsert(rows((1, 1, "sf", "a"), (2, 1, "sf", "b")))
    opts = {"hoodie.combine.before.upsert": "false", "hoodie.parquet.small.file.limit": "0"}
    table.upsert(rows((1, 5, "sf", "x"), (1, 7, "sf", "y"), (3, 1, "nyc", "n1"), (3, 2, "nyc", "n2")), options=opts)
    got = user_rows(table)
    by_id = Counter(x["id"] for x in got)
    assert by_id[2] == 1
    assert by_id[3] == 2  # new keys: no dedup without combine, as in Hudi
    assert [x["v"] for x in got if x["id"] == 1] == ["y"]
    assert_hudi_rs_agrees(table)


# -- keys and partitions ---------------------------------------------------------------------------


def test_complex_keys_and_placeholders(tmp_path: Path) -> None:
    base = tmp_path / "t"
    table = HudiTable.create(base, name="t", record_key=["id", "name"], partition_fields=["city"])
    schema = pa.schema([("id", pa.int64()), ("name", pa.string()), ("city", pa.string()), ("v", pa.int64())])
    batch = pa.Table.from_pylist([
        {"id": 1, "name": "a", "city": "sf", "v": 1},
        {"id": 1, "name": "b", "city": "sf", "v": 2},
        {"id": 2, "name": None, "city": "sf", "v": 3},
        {"id": 3, "name": "", "city": "sf", "v": 4},
    ], schema=schema)
    table.upsert(batch)
    keys = sorted(table.read().column("_hoodie_record_key").to_pylist())
    assert keys == ["id:1,name:a", "id:1,name:b", "id:2,name:__null__", "id:3,name:__empty__"]
    props = parse_properties((base / ".hoodie" / "hoodie.properties").read_text())
    assert props["hoodie.table.keygenerator.type"] == "COMPLEX"
    assert props["hoodie.table.recordkey.fields"] == "id,name"
    # an update addresses the record by all key fields
    table.upsert(pa.Table.from_pylist([
        {"id": 1, "name": "b", "city": "sf", "v": 20}, {"id": 2, "name": None, "city": "sf", "v": 30},
    ], schema=schema))
    got = {r["_hoodie_record_key"]: r["v"] for r in table.read().to_pylist()}
    assert got == {"id:1,name:a": 1, "id:1,name:b": 20, "id:2,name:__null__": 30, "id:3,name:__empty__": 4}
    assert_hudi_rs_agrees(table)
    with pytest.raises(InvalidInputError, match="id, name"):
        table.upsert(pa.Table.from_pylist([{"id": None, "name": None, "city": "sf", "v": 0}], schema=schema))


@pytest.mark.parametrize("hive_style,expected", [
    (True, {"year=2026/month=01", "year=2026/month=02", "year=__HIVE_DEFAULT_PARTITION__/month=02"}),
    (False, {"2026/01", "2026/02", "__HIVE_DEFAULT_PARTITION__/02"}),
])
def test_multi_level_partitions(tmp_path: Path, hive_style: bool, expected: set[str]) -> None:
    base = tmp_path / "t"
    table = HudiTable.create(base, name="t", record_key="id", partition_fields=["year", "month"],
                             hive_style=hive_style)
    batch = pa.table({"id": [1, 2, 3, 4], "year": ["2026", "2026", None, ""], "month": ["01", "02", "02", "02"]})
    t = table.upsert(batch).instant_time
    got = table.read()
    assert set(got.column("_hoodie_partition_path").to_pylist()) == expected
    by_id = dict(zip(got.column("id").to_pylist(), got.column("_hoodie_partition_path").to_pylist(), strict=True))
    assert by_id[3] == by_id[4]  # null and empty both go to the default partition
    for p in expected:
        assert (base / p).is_dir()
        assert parse_properties((base / p / ".hoodie_partition_metadata").read_text()) == {
            "commitTime": t, "partitionDepth": "2"}
    props = parse_properties((base / ".hoodie" / "hoodie.properties").read_text())
    assert props["hoodie.table.partition.fields"] == "year,month"
    assert props["hoodie.table.keygenerator.type"] == "COMPLEX"
    assert_hudi_rs_agrees(table)


def test_null_partition_value_hive_style(tmp_path: Path) -> None:
    base = tmp_path / "t"
    table = make_table(base)
    table.upsert(rows((1, 1, None, "a"), (2, 1, "sf", "b")))
    assert (base / "city=__HIVE_DEFAULT_PARTITION__" / ".hoodie_partition_metadata").exists()
    table.upsert(rows((1, 2, None, "A")))  # the update finds the record in the default partition
    assert {x["id"]: x["v"] for x in user_rows(table)} == {1: "A", 2: "b"}
    assert_hudi_rs_agrees(table)


def test_non_partitioned_table_layout(tmp_path: Path) -> None:
    base = tmp_path / "t"
    table = make_table(base, partition_fields=[])
    t = table.upsert(rows((1, 1, "x", "a"))).instant_time
    assert parse_properties((base / ".hoodie_partition_metadata").read_text()) == {
        "commitTime": t, "partitionDepth": "0"}
    [f] = data_files(base)
    assert f.parent == base
    meta = commit_meta(base, t)
    assert list(stats_by_partition(meta)) == [""]
    assert all_stats(meta)[0]["path"] == f.name
    assert table.read().column("_hoodie_partition_path").to_pylist() == [""]
    assert_hudi_rs_agrees(table)


def test_bloom_and_simple_index_give_the_same_table(tmp_path: Path) -> None:
    import random

    rng = random.Random(7)
    batches = []
    ids = list(range(300))
    batches.append(("upsert", rows(*[(i, 1, ("sf", "nyc")[i % 2], f"v{i}") for i in ids])))
    upd = rng.sample(ids, 60) + list(range(300, 340))
    batches.append(("upsert", rows(*[(i, 2, ("sf", "nyc")[i % 2], f"u{i}") for i in upd])))
    batches.append(("delete", pa.table({"id": [0, 1, 2, 999], "city": ["sf", "nyc", "sf", "sf"]})))
    batches.append(("upsert", rows(*[(i, 3, ("sf", "nyc", "la")[i % 3], f"w{i}") for i in range(290, 310)])))
    results = {}
    for index in ("SIMPLE", "BLOOM"):
        table = make_table(tmp_path / index)
        opts = {"hoodie.index.type": index, **SMALL_BLOOM, "hoodie.parquet.small.file.limit": "0"}
        for op, b in batches:
            table.write(b, op, options=opts)
        results[index] = user_rows(table, ("_hoodie_record_key", "_hoodie_partition_path", "id", "ts", "city", "v"))
        assert_hudi_rs_agrees(table)
    assert results["BLOOM"] == results["SIMPLE"]
    assert len(results["SIMPLE"]) == len({(r["id"], r["city"]) for r in results["SIMPLE"]})


def test_global_index_is_refused_rather_than_silently_partition_scoped(tmp_path: Path) -> None:
    """Only the partition-scoped SIMPLE and BLOOM indexes exist; asking for a global one must not quietly
    keep a key once per partition: the write is refused, naming the supported values, and nothing changes."""
    table = make_table(tmp_path / "t")
    table.upsert(rows((1, 1, "sf", "a"), (2, 1, "nyc", "b")))
    before = user_rows(table)
    with pytest.raises(ConfigError, match=r"hoodie\.index\.type.*SIMPLE, BLOOM"):
        table.upsert(rows((1, 2, "la", "moved")), options={"hoodie.index.type": "GLOBAL_SIMPLE"})
    assert user_rows(table) == before
    assert len(completed(tmp_path / "t")) == 1


def test_non_global_index_keeps_a_key_per_partition(tmp_path: Path) -> None:
    table = make_table(tmp_path / "t")
    table.upsert(rows((1, 1, "sf", "a")))
    table.upsert(rows((1, 2, "la", "b")))
    assert sorted((x["city"], x["v"]) for x in user_rows(table)) == [("la", "b"), ("sf", "a")]


def test_key_strings_of_numbers_and_bools_are_javas(tmp_path: Path) -> None:
    """Hudi turns key and partition values into strings with Java's String.valueOf: 1.0 -> "1.0"."""
    table = HudiTable.create(tmp_path / "t", name="t", record_key=["f", "b"], partition_fields=["p"])
    table.upsert(pa.table({"f": [1.0, 2.5, 1e20], "b": [True, False, True], "p": [3, 4, 5]}))
    got = sorted(zip(table.read().column("_hoodie_record_key").to_pylist(),
                     table.read().column("_hoodie_partition_path").to_pylist(), strict=True))
    assert got == [("f:1.0,b:true", "3"), ("f:1.0E20,b:true", "5"), ("f:2.5,b:false", "4")]


def test_read_modify_write_round_trip(tmp_path: Path) -> None:
    """The output of read() (meta columns included) can be written back as an upsert."""
    table = make_table(tmp_path / "t")
    table.upsert(rows((1, 1, "sf", "a"), (2, 1, "nyc", "b")))
    data = table.read()
    data = data.set_column(data.schema.get_field_index("ts"), "ts", pa.array([5] * data.num_rows, pa.int64()))
    r = table.upsert(data)
    assert (r.num_updates, r.num_inserts) == (2, 0)
    assert table.schema().names == ["id", "ts", "city", "v"]
    assert {x["id"]: x["ts"] for x in user_rows(table)} == {1: 5, 2: 5}
    assert_hudi_rs_agrees(table)


def test_bloom_index_with_keys_beyond_the_bmp(tmp_path: Path) -> None:
    """Keys with characters beyond U+FFFF: the footer range is in Java's UTF-16 order, and BLOOM finds them."""
    base = tmp_path / "t"
    table = HudiTable.create(base, name="t", record_key="k")
    keys = ["a", "\uff5e", "\U0001f600", "z"]
    table.upsert(pa.table({"k": keys, "v": [1, 2, 3, 4]}))
    [f] = data_files(base)
    kv = pq.read_metadata(f).metadata
    java_order = sorted(keys, key=lambda k: k.encode("utf-16-be"))
    assert kv[b"hoodie_min_record_key"].decode() == java_order[0]
    assert kv[b"hoodie_max_record_key"].decode() == java_order[-1]
    table.upsert(pa.table({"k": ["\uff5e", "\U0001f600"], "v": [20, 30]}), options={"hoodie.index.type": "BLOOM"})
    got = {r["k"]: r["v"] for r in table.read().to_pylist()}
    assert got == {"a": 1, "\uff5e": 20, "\U0001f600": 30, "z": 4}


# -- small files -----------------------------------------------------------------------------------

# every file is "small" (limit far above any file or commit), so the average record size stays at the
# estimate: a new group takes max.file.size // estimate = 10 records, an existing file of s bytes
# (a few kB) takes (max.file.size - s) // estimate = 9 more
PACKING = {
    **SMALL_BLOOM,
    "hoodie.parquet.small.file.limit": "500000",
    "hoodie.parquet.max.file.size": "1000000",
    "hoodie.copyonwrite.record.size.estimate": "100000",
}


def _ids(n0: int, n: int, city: str = "sf") -> pa.Table:
    return rows(*[(i, 1, city, f"v{i}") for i in range(n0, n0 + n)])


def _counts(base: Path) -> dict[str, int]:
    return {fid: pq.read_metadata(p).num_rows for fid, p in current_base_files(base).items()}


def test_inserts_fill_small_files_then_bounded_new_groups(tmp_path: Path) -> None:
    base = tmp_path / "t"
    table = make_table(base)
    table.insert(_ids(0, 25), options=PACKING)
    first = _counts(base)
    assert sorted(first.values()) == [8, 8, 9]  # ceil(25 / 10) groups, evenly split
    sizes = {fid: p.stat().st_size for fid, p in current_base_files(base).items()}
    room = {fid: (1_000_000 - s) // 100_000 for fid, s in sizes.items()}
    assert all(r == 9 for r in room.values())  # files are tiny next to the 100 kB estimate

    r = table.insert(_ids(100, 35), options=PACKING)
    second = _counts(base)
    meta = commit_meta(base, r.instant_time)
    packed = [s for s in all_stats(meta) if s["fileId"] in first]
    assert len(packed) == 3  # every small file takes inserts, under its own file id
    for s in packed:
        assert s["prevCommit"] != "null" and s["prevBaseFile"]
        assert second[s["fileId"]] == first[s["fileId"]] + room[s["fileId"]]
        assert (s["numInserts"], s["numUpdateWrites"]) == (room[s["fileId"]], 0)
    new = {fid: n for fid, n in second.items() if fid not in first}
    assert list(new.values()) == [35 - 27]
    assert sum(second.values()) == 60
    assert len({x["id"] for x in user_rows(table)}) == 60
    assert_hudi_rs_agrees(table)


def test_inserts_beyond_one_group_are_split_evenly(tmp_path: Path) -> None:
    base = tmp_path / "t"
    table = make_table(base)
    table.upsert(_ids(0, 41), options=PACKING)
    counts = sorted(_counts(base).values())
    assert counts == [8, 8, 8, 8, 9] and max(counts) <= 10


def test_small_file_limit_zero_always_makes_new_groups(tmp_path: Path) -> None:
    base = tmp_path / "t"
    table = make_table(base)
    opts = {**PACKING, "hoodie.parquet.small.file.limit": "0"}
    table.insert(_ids(0, 5), options=opts)
    before = current_base_files(base)
    table.upsert(_ids(10, 5), options=opts)
    table.insert(_ids(20, 5), options=opts)
    after = current_base_files(base)
    assert len(after) == 3
    assert all(after[fid] == p for fid, p in before.items())
    assert all(n == 5 for n in _counts(base).values())
    assert_hudi_rs_agrees(table)


def test_updates_and_inserts_in_one_upsert_are_packed_together(tmp_path: Path) -> None:
    base = tmp_path / "t"
    table = make_table(base)
    table.upsert(_ids(0, 4), options=PACKING)
    [fid] = _counts(base)
    r = table.upsert(rows((0, 2, "sf", "upd"), (50, 1, "sf", "new")), options=PACKING)
    assert _counts(base) == {fid: 5}
    [s] = all_stats(commit_meta(base, r.instant_time))
    assert (s["fileId"], s["numWrites"], s["numUpdateWrites"], s["numInserts"]) == (fid, 5, 1, 1)


# -- two-phase API and failures -------------------------------------------------------------------


def _seeded(tmp_path: Path) -> tuple[Path, HudiTable]:
    base = tmp_path / "t"
    table = make_table(base)
    table.upsert(rows((1, 1, "sf", "a"), (2, 1, "nyc", "b")), options=SMALL_BLOOM)
    return base, table


def test_two_phase_write_is_invisible_until_commit(tmp_path: Path) -> None:
    base, table = _seeded(tmp_path)
    before_rows = user_rows(table)
    client = table.write_client(SMALL_BLOOM)
    t = client.start_commit()
    assert (timeline_dir(base) / f"{t}.commit.requested").exists()
    assert (base / ".hoodie" / ".heartbeat" / t).exists()
    statuses = client.upsert(rows((1, 2, "sf", "A"), (3, 1, "la", "c")), t)
    assert {s.partition_path for s in statuses} == {"city=sf", "city=la"}
    assert (timeline_dir(base) / f"{t}.inflight").exists()
    assert any(BASE_FILE.match(f.name)["t"] == t for f in data_files(base))  # type: ignore[index]
    markers = sorted(p.name for p in (base / ".hoodie" / ".temp" / t).rglob("*.marker.*"))
    assert len(markers) == 2
    assert any(m.endswith(".parquet.marker.MERGE") for m in markers)
    assert any(m.endswith(".parquet.marker.CREATE") for m in markers)
    # nothing is visible yet, to us or to hudi-rs
    assert user_rows(table) == before_rows
    assert_hudi_rs_agrees(table)
    result = client.commit(t, statuses)
    assert result.instant_time == t and result.num_updates == 1 and result.num_inserts == 1
    assert {x["id"]: x["v"] for x in user_rows(table)} == {1: "A", 2: "b", 3: "c"}
    assert leftovers(base) == []
    assert_hudi_rs_agrees(table)


def test_abort_removes_data_then_timeline_and_keeps_the_table(tmp_path: Path) -> None:
    base, table = _seeded(tmp_path)
    before = snapshot_state(base, table)
    client = table.write_client(SMALL_BLOOM)
    t = client.start_commit()
    client.upsert(rows((1, 2, "sf", "A"), (3, 1, "la", "c")), t)
    client.abort(t)
    assert snapshot_state(base, table) == before
    assert not any(t in name for name in data_file_names(base))
    assert leftovers(base) == []
    assert_hudi_rs_agrees(table)
    table.upsert(rows((1, 3, "sf", "B")), options=SMALL_BLOOM)  # the table stays writable
    assert {x["id"]: x["v"] for x in user_rows(table)} == {1: "B", 2: "b"}


def test_abort_deletes_data_files_before_timeline_files(tmp_path: Path, monkeypatch) -> None:
    """A crash half-way through an abort must never leave data files whose instant is already gone."""
    _, table = _seeded(tmp_path)
    client = table.write_client(SMALL_BLOOM)
    t = client.start_commit()
    client.upsert(rows((1, 2, "sf", "A"), (3, 1, "la", "c")), t)
    deleted: list[str] = []
    real = Storage.delete_file

    def recording(self: Storage, rel: str, *, missing_ok: bool = True) -> bool:
        deleted.append(rel)
        return real(self, rel, missing_ok=missing_ok)

    monkeypatch.setattr(Storage, "delete_file", recording)
    client.abort(t)
    data = [i for i, r in enumerate(deleted) if r.endswith(f"_{t}.parquet")]
    inflight = [i for i, r in enumerate(deleted) if r.endswith(f"/{t}.inflight")]
    requested = [i for i, r in enumerate(deleted) if r.endswith(f"/{t}.commit.requested")]
    assert len(data) == 2 and len(inflight) == 1 and len(requested) == 1, deleted
    assert max(data) < inflight[0] < requested[0]


def test_abort_right_after_start_commit(tmp_path: Path) -> None:
    base, table = _seeded(tmp_path)
    before = snapshot_state(base, table)
    client = table.write_client()
    t = client.start_commit()
    client.abort(t)
    assert snapshot_state(base, table) == before and leftovers(base) == []


def test_a_failing_task_leaves_nothing_of_its_instant(tmp_path: Path, monkeypatch) -> None:
    base, table = _seeded(tmp_path)
    before = snapshot_state(base, table)
    real = handles_module.write_base_file
    lock = threading.Lock()
    calls = []

    def flaky(*a: Any, **k: Any) -> Any:
        with lock:
            calls.append(1)
            n = len(calls)
        if n == 2:
            raise OSError("disk full")
        return real(*a, **k)

    monkeypatch.setattr(handles_module, "write_base_file", flaky)
    with pytest.raises((OSError, HudiOpsError)) as info:
        table.upsert(rows((1, 2, "sf", "A"), (2, 2, "nyc", "B"), (3, 1, "la", "c"), (4, 1, "sea", "d")),
                     options=SMALL_BLOOM)
    assert "disk full" in str(info.value)
    assert len(calls) >= 2
    monkeypatch.undo()
    assert snapshot_state(base, table) == before
    assert leftovers(base) == []
    assert_hudi_rs_agrees(table)
    table.upsert(rows((1, 2, "sf", "A")), options=SMALL_BLOOM)
    assert {x["id"]: x["v"] for x in user_rows(table)} == {1: "A", 2: "b"}


def test_one_write_per_instant_and_unknown_instants(tmp_path: Path) -> None:
    base, table = _seeded(tmp_path)
    client = table.write_client(SMALL_BLOOM)
    with pytest.raises(TimelineError, match="20200101000000000"):
        client.commit("20200101000000000", [])
    with pytest.raises(TimelineError, match="start_commit"):
        client.upsert(rows((5, 1, "sf", "x")), "20200101000000000")
    t = client.start_commit()
    with pytest.raises(TimelineError, match="no inflight"):
        client.commit(t, [])
    statuses = client.upsert(rows((5, 1, "sf", "x")), t)
    with pytest.raises(TimelineError, match="exactly one write"):
        client.upsert(rows((6, 1, "sf", "y")), t)
    client.commit(t, statuses)
    with pytest.raises(TimelineError):
        client.commit(t, statuses)
    assert sorted(x["id"] for x in user_rows(table)) == [1, 2, 5]
    assert len(completed(base)) == 2
    assert_hudi_rs_agrees(table)


# -- bad input -------------------------------------------------------------------------------------


def _string_key_table(tmp_path: Path) -> tuple[Path, HudiTable, pa.Schema]:
    base = tmp_path / "t"
    table = make_table(base)
    schema = pa.schema([("id", pa.string()), ("ts", pa.int64()), ("city", pa.string()), ("n", pa.int64())])
    table.upsert(pa.Table.from_pylist([{"id": "k1", "ts": 1, "city": "sf", "n": 1}], schema=schema))
    return base, table, schema


BAD_INPUTS = {
    "null key": ({"id": [None], "ts": [1], "city": ["sf"], "n": [1]}, r"'id'.*null or empty.*(fill|drop)"),
    "empty key": ({"id": [""], "ts": [1], "city": ["sf"], "n": [1]}, r"'id'.*null or empty.*(fill|drop)"),
    "missing key": ({"ts": [1], "city": ["sf"], "n": [1]}, r"\bid\b.*add"),
    "missing partition": ({"id": ["k2"], "ts": [1], "n": [1]}, r"\bcity\b.*add"),
    "missing ordering": ({"id": ["k2"], "city": ["sf"], "n": [1]}, r"\bts\b.*add"),
    "null ordering": ({"id": ["k2"], "ts": [None], "city": ["sf"], "n": [1]}, r"'ts'.*null.*value"),
    "missing column": ({"id": ["k2"], "ts": [1], "city": ["sf"]}, r"\bn\b.*(add|nulls)"),
    "uncastable": ({"id": ["k2"], "ts": [1], "city": ["sf"], "n": ["abc"]}, r"'n'.*int64"),
}


@pytest.mark.parametrize("case", list(BAD_INPUTS))
def test_bad_input_is_refused_clearly_and_loses_nothing(tmp_path: Path, case: str) -> None:
    base, table, _ = _string_key_table(tmp_path)
    before = snapshot_state(base, table)
    data, pattern = BAD_INPUTS[case]
    types = {"id": pa.string(), "ts": pa.int64(), "city": pa.string(), "n": pa.int64()}
    batch = pa.table({k: pa.array(v, None if case == "uncastable" and k == "n" else types[k]) for k, v in data.items()})
    with pytest.raises(InvalidInputError) as info:
        table.upsert(batch)
    assert re.search(pattern, str(info.value)), str(info.value)
    assert "\n" not in str(info.value)
    assert snapshot_state(base, table) == before
    assert leftovers(base) == []


def test_an_all_null_key_column_names_the_field(tmp_path: Path) -> None:
    """A key column whose values are all null (e.g. from JSON, where it gets Arrow's null type)."""
    base, table, _ = _string_key_table(tmp_path)
    before = snapshot_state(base, table)
    with pytest.raises(InvalidInputError, match=r"'id'"):
        table.upsert(pa.table({"id": [None, None], "ts": [1, 2], "city": ["sf", "sf"], "n": [1, 2]}))
    assert snapshot_state(base, table) == before


def test_an_all_null_partition_column_goes_to_the_default_partition(tmp_path: Path) -> None:
    """A batch whose partition values are all null (Arrow null type, as JSON input gives) is valid input."""
    _, table, _ = _string_key_table(tmp_path)
    table.upsert(pa.table({"id": ["k2"], "ts": [1], "city": [None], "n": [2]}))
    got = {r["id"]: r["_hoodie_partition_path"] for r in table.read().to_pylist()}
    assert got == {"k1": "city=sf", "k2": "city=__HIVE_DEFAULT_PARTITION__"}
    assert_hudi_rs_agrees(table)


def test_bad_input_on_the_first_write_names_the_field(tmp_path: Path) -> None:
    base = tmp_path / "t"
    table = make_table(base)
    with pytest.raises(InvalidInputError, match=r"record key field 'id'"):
        table.upsert(pa.table({"ts": [1], "city": ["sf"]}))
    with pytest.raises(InvalidInputError, match=r"partition path field 'city'"):
        table.upsert(pa.table({"id": [1], "ts": [1]}))
    with pytest.raises(InvalidInputError, match=r"ordering field 'ts'"):
        table.upsert(pa.table({"id": [1], "city": ["sf"]}))
    assert timeline_files(base) == [] and data_files(base) == []


def test_the_fix_suggested_for_a_missing_ordering_field_works(tmp_path: Path) -> None:
    """If the error for a missing ordering field recommends a write option, that option must be accepted."""
    table = make_table(tmp_path / "t")
    batch = pa.table({"id": [1], "city": ["sf"], "v": ["a"]})
    with pytest.raises(InvalidInputError) as info:
        table.upsert(batch)
    suggestion = re.search(r"(hoodie\.[\w.]+)=(\w+)", str(info.value))
    if suggestion:
        table.upsert(batch, options={suggestion.group(1): suggestion.group(2)})
        assert [x["id"] for x in table.read().to_pylist()] == [1]


def test_lossy_cast_is_refused(tmp_path: Path) -> None:
    base, table, _ = _string_key_table(tmp_path)
    before = snapshot_state(base, table)
    with pytest.raises(InvalidInputError, match="'n'"):
        table.upsert(pa.table({"id": ["k2"], "ts": [1], "city": ["sf"], "n": [1.5]}))
    assert snapshot_state(base, table) == before
    # a lossless widening cast is fine
    table.upsert(pa.table({"id": ["k2"], "ts": pa.array([1], pa.int32()), "city": ["sf"],
                           "n": pa.array([7], pa.int8())}))
    assert {r["id"]: r["n"] for r in table.read().to_pylist()} == {"k1": 1, "k2": 7}
    assert table.schema().field("n").type == pa.int64()


def test_new_nullable_column_is_added_and_old_rows_read_null(tmp_path: Path) -> None:
    base = tmp_path / "t"
    table = make_table(base)
    table.upsert(rows((1, 1, "sf", "a"), (2, 1, "nyc", "b")), options=SMALL_BLOOM)
    batch = rows((3, 1, "sf", "c")).append_column("extra", pa.array([2.5]))
    r = table.upsert(batch, options=SMALL_BLOOM)
    schema = json.loads(commit_meta(base, r.instant_time)["extraMetadata"]["schema"])
    assert [f["name"] for f in schema["fields"]] == ["id", "ts", "city", "v", "extra"]
    assert table.schema().names == ["id", "ts", "city", "v", "extra"]
    got = {x["id"]: x["extra"] for x in table.read().to_pylist()}
    assert got == {1: None, 2: None, 3: 2.5}
    theirs = hudi_rs_table(base)
    assert theirs is not None
    assert {x["id"]: x["extra"] for x in theirs.to_pylist()} == got
    assert_hudi_rs_agrees(table)


def test_write_stats_record_how_long_each_handle_took(tmp_path: Path) -> None:
    n = 50_000
    batch = pa.table({"id": list(range(n)), "ts": [1] * n, "city": ["sf"] * n, "v": [f"n{i}" for i in range(n)]})
    table = make_table(tmp_path / "t")
    table.bulk_insert(batch)
    table.upsert(batch.slice(0, 10).set_column(1, "ts", pa.array([2] * 10)))
    timeline = table.timeline()
    created, merged = (next(iter(timeline.commit_metadata(i).write_stats())).runtime_stats
                       for i in sorted(timeline.completed_writes(), key=timeline.completion_time))
    assert created is not None and merged is not None
    assert created.total_create_time > 0 and created.total_upsert_time == 0
    assert merged.total_upsert_time >= merged.total_scan_time > 0 and merged.total_create_time == 0
