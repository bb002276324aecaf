"""The `hudi-ops` command on real Spark-written tables (the hudi-rs fixtures): `read` returns what hudi-rs itself
returns for the same options (and what the fixture catalogue says the table holds), `timeline`, `commits` and
`file-groups` show what is on disk, and bad input exits 2 with one line on standard error.

The lock commands need ZooKeeper and are tested with it (tests/integration).
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import hudi
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from hudi_ops.cli import main
from hudi_ops.storage import Storage

V8_COW = "sample_table/cow/v8_nonpartitioned"
V8_PARTITIONED = "sample_table/cow/v8_complexkeygen_hivestyle"
V6_MOR = "sample_table/mor/parquet/v6_nonpartitioned"
V6_ROLLBACK = "sample_table/mor/parquet/v6_nonpartitioned_rollback"
V6_DELETES = "quickstart_trips_table/mor/avro/v6_trips_8i3d"
V8_TRIPS = "quickstart_trips_table/mor/avro/v8_trips_8i3u1d"
V9_TXNS = "sample_table/mor/avro/v9_txns_simple_nometa"

# -- what the catalogue says the tables hold (shared/reference/hudi-rs-oracle.md §4) ---------------

STORY = [(1, "Alice", False), (2, "Bob", False), (3, "Carol", True), (4, "Diana", True)]
STORY_FIRST_COMMIT = [(1, "Alice", True), (2, "Bob", False), (3, "Carol", True)]
EXPECTED = {  # table -> (key columns, the rows' values of those columns)
    V8_COW: (["id", "name", "isActive"], STORY),
    V8_PARTITIONED: (["id", "name", "isActive"], STORY),
    V6_MOR: (["id", "name", "isActive"], STORY),  # Alice's update is merged from a parquet log block
    V6_ROLLBACK: (["id", "name", "isActive"], [(1, "Alice", True), (2, "Bob", True), (3, "Carol", True)]),
    V6_DELETES: (["rider"], [("rider-E",), ("rider-F",), ("rider-G",), ("rider-I",), ("rider-J",)]),
    V8_TRIPS: (["rider", "fare"], [("rider-A", 0.0), ("rider-C", 27.7), ("rider-D", 33.9), ("rider-E", 93.5),
                                   ("rider-G", 0.0), ("rider-I", 41.06)]),
    V9_TXNS: (["txn_id"], [(f"TXN-{n:03d}",) for n in (1, 3, 7, 8, *range(11, 19))]),
    "sample_table/cow/v8_empty": (["id"], []),
}


# -- helpers ---------------------------------------------------------------------------------------


@pytest.fixture
def table(fixture_table):
    return fixture_table


def run(capsys: pytest.CaptureFixture[str], *args: str | Path) -> tuple[int, str, str]:
    rc = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return rc, out, err


def ok(capsys: pytest.CaptureFixture[str], *args: str | Path) -> str:
    rc, out, err = run(capsys, *args)
    assert rc == 0, err
    return out


def rows_of(text: str) -> list[dict[str, Any]]:
    """The rows of jsonl output, in a stable order."""
    return sorted((json.loads(line) for line in text.splitlines() if line.strip()), key=repr)


def read(capsys: pytest.CaptureFixture[str], base: Path, *args: str) -> list[dict[str, Any]]:
    return rows_of(ok(capsys, "read", base, *args))


def hudi_rs(
    base: Path,
    *,
    filters: list[tuple[str, str, str]] | None = None,
    projection: list[str] | None = None,
    read_optimized: bool = False,
    as_of: str | None = None,
    incremental: tuple[str, str | None] | None = None,
) -> pa.Table | None:
    """hudi-rs read directly, with the options given (None: no batches at all)."""
    options = hudi.HudiReadOptions(
        filters=filters or [], projection=projection,
        hudi_options={"hoodie.read.use.read_optimized.mode": "true"} if read_optimized else {},
    )
    if incremental is not None:
        options = options.with_query_type(hudi.HudiQueryType.Incremental).with_start_timestamp(incremental[0])
        if incremental[1] is not None:
            options = options.with_end_timestamp(incremental[1])
    if as_of is not None:
        options = options.with_as_of_timestamp(as_of)
    batches = hudi.HudiTable(str(base)).read(options)
    return pa.Table.from_batches(batches) if batches else None


def as_jsonl_rows(t: pa.Table | None) -> list[dict[str, Any]]:
    """hudi-rs' rows as the CLI's jsonl shows them (values JSON cannot hold as text)."""
    if t is None:
        return []
    return rows_of("".join(json.dumps(r, default=str) + "\n" for r in t.to_pylist()))


def values(rows: list[dict[str, Any]], cols: list[str]) -> list[tuple]:
    return sorted(tuple(r[c] for c in cols) for r in rows)


def write_times(base: Path) -> list[tuple[str, str]]:
    """(requested, completion) of each completed commit, from the timeline's file names (layout 2)."""
    files = (base / ".hoodie/timeline").iterdir()
    names = (re.fullmatch(r"(\d{17})_(\d{17})\.(?:delta)?commit", f.name) for f in files)
    return sorted(((m[1], m[2]) for m in names if m), key=lambda t: t[1])


def assert_one_line_error(err: str) -> None:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("hudi-ops: error: "), err
    assert "Traceback" not in err


# -- read ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("relative", list(EXPECTED))
def test_read_returns_what_hudi_rs_and_the_catalogue_say(table, capsys, relative):
    base = table(relative)
    got = read(capsys, base)
    assert got == as_jsonl_rows(hudi_rs(base))
    cols, expected = EXPECTED[relative]
    assert values(got, cols) == expected
    if got:
        assert list(got[0])[:5] == ["_hoodie_commit_time", "_hoodie_commit_seqno", "_hoodie_record_key",
                                    "_hoodie_partition_path", "_hoodie_file_name"]


def test_columns_come_back_in_the_order_asked(table, capsys):
    base = table(V8_COW)
    got = read(capsys, base, "--columns", "name,id")
    assert [list(r) for r in got] == [["name", "id"]] * 4
    assert got == as_jsonl_rows(hudi_rs(base, projection=["name", "id"]))
    assert values(got, ["id", "name"]) == [(i, n) for i, n, _ in STORY]


@pytest.mark.parametrize(("flags", "filters"), [
    (["isActive = true"], [("isActive", "=", "true")]),
    (["id > 1"], [("id", ">", "1")]),
    (["id <= 2"], [("id", "<=", "2")]),
    (["name != Bob"], [("name", "!=", "Bob")]),
    (["name in Alice,Diana"], [("name", "IN", "Alice,Diana")]),
    (["name NOT IN Alice,Diana"], [("name", "NOT IN", "Alice,Diana")]),
    (["byteField >= 10", "shortField != 100"], [("byteField", ">=", "10"), ("shortField", "!=", "100")]),  # partitions
    (["dateField < 2023-04-03"], [("dateField", "<", "2023-04-03")]),
])
def test_filters_reach_hudi_rs(table, capsys, flags, filters):
    base = table(V8_PARTITIONED)
    args = [a for f in flags for a in ("--filter", f)]
    got = read(capsys, base, *args, "--columns", "id,name")
    assert got == as_jsonl_rows(hudi_rs(base, filters=filters, projection=["id", "name"]))
    assert 0 < len(got) < 4  # each filter keeps some rows, not all


def test_catalogue_filter_on_partition_columns(table, capsys):
    # byteField in [10, 20) and shortField != 100 -> Alice (inactive) and Carol
    got = read(capsys, table(V8_PARTITIONED), "--filter", "byteField >= 10", "--filter", "byteField < 20",
               "--filter", "shortField != 100", "--columns", "id,name,isActive")
    assert values(got, ["id", "name", "isActive"]) == [(1, "Alice", False), (3, "Carol", True)]


def test_as_of_reaches_hudi_rs(table, capsys):
    base = table(V8_COW)
    (first, first_done), (second, _) = write_times(base)
    for as_of, expected in ((first, STORY_FIRST_COMMIT), (first_done, STORY_FIRST_COMMIT), (second, STORY)):
        got = read(capsys, base, "--as-of", as_of)
        assert values(got, ["id", "name", "isActive"]) == expected, as_of
        assert got == as_jsonl_rows(hudi_rs(base, as_of=as_of))
    assert read(capsys, base, "--as-of", "20000101000000000") == []  # before the first commit


def test_incremental_reaches_hudi_rs(table, capsys):
    """Table version 8: incremental ranges are (begin, end] over completion times."""
    base = table(V8_COW)
    (_, c1), (r2, c2) = write_times(base)
    second = read(capsys, base, "--incremental", "--begin", c1)
    assert values(second, ["id", "name", "isActive"]) == [(1, "Alice", False), (4, "Diana", True)]
    assert {r["_hoodie_commit_time"] for r in second} == {r2}
    assert second == as_jsonl_rows(hudi_rs(base, incremental=(c1, None)))
    first = read(capsys, base, "--incremental", "--begin", "000", "--end", c1)
    assert values(first, ["id", "name", "isActive"]) == STORY_FIRST_COMMIT
    assert first == as_jsonl_rows(hudi_rs(base, incremental=("000", c1)))
    assert read(capsys, base, "--incremental", "--begin", c2) == []


def test_read_optimized_reaches_hudi_rs(table, capsys):
    """Alice's update lives in a log file: a read-optimized read of the base files still shows her active."""
    base = table(V6_MOR)
    ro = read(capsys, base, "--read-optimized")
    assert values(ro, ["id", "name", "isActive"]) == [
        (1, "Alice", True), (2, "Bob", False), (3, "Carol", True), (4, "Diana", True)]
    assert ro == as_jsonl_rows(hudi_rs(base, read_optimized=True))
    assert values(read(capsys, base), ["id", "name", "isActive"]) == STORY
    trips = read(capsys, table(V6_DELETES), "--read-optimized", "--columns", "rider")
    assert len(trips) == 8  # the deletes of A, C and D live in a log block


def test_read_to_parquet_and_jsonl_files(table, tmp_path, capsys):
    base = table(V8_TRIPS)
    out = tmp_path / "out.parquet"
    assert ok(capsys, "read", base, "--format", "parquet", "--output", out, "--columns", "rider,fare,city") == ""
    got = pq.read_table(out)
    theirs = hudi_rs(base, projection=["rider", "fare", "city"])
    assert got.schema.names == ["rider", "fare", "city"]
    assert got.schema.types == theirs.schema.types
    assert sorted(got.to_pylist(), key=repr) == sorted(theirs.to_pylist(), key=repr)
    out = tmp_path / "out.jsonl"
    assert ok(capsys, "read", base, "--output", out) == ""
    assert rows_of(out.read_text()) == read(capsys, base)


# -- timeline, commits, file groups ----------------------------------------------------------------


def test_timeline_lists_every_instant_file(table, capsys):
    base = table(V8_COW)
    entries = json.loads(ok(capsys, "timeline", base, "--json"))
    on_disk = sorted(f.name for f in (base / ".hoodie/timeline").iterdir() if f.is_file())
    assert sorted(e["file"] for e in entries) == on_disk
    done = [(e["requested"], e["completed"]) for e in entries if e["state"] == "COMPLETED"]
    assert done == write_times(base)
    assert {(e["action"], e["state"]) for e in entries if e["requested"] == done[0][0]} == {
        ("commit", "REQUESTED"), ("commit", "INFLIGHT"), ("commit", "COMPLETED")}
    lines = ok(capsys, "timeline", base).splitlines()
    assert lines[0].split() == ["requested", "action", "state", "completed", "file"]
    assert len(lines) == 1 + len(on_disk)
    assert any(done[1][1] in line and "COMPLETED" in line for line in lines)


def test_timeline_of_a_version_6_table(table, capsys):
    """Layout 1 keeps instants in .hoodie itself and records no completion times."""
    base = table(V6_ROLLBACK)
    entries = json.loads(ok(capsys, "timeline", base, "--json"))
    on_disk = {f.name for f in (base / ".hoodie").iterdir() if re.match(r"\d{17}\.", f.name)}
    assert {e["file"] for e in entries} == on_disk
    assert [(e["action"], e["completed"]) for e in entries if e["state"] == "COMPLETED"] == [
        ("deltacommit", None), ("rollback", None), ("deltacommit", None)]


COMMIT_COLUMNS = ["action", "operation", "files", "writes", "inserts", "updates", "deletes", "bytes"]


def rs_writes(base: Path) -> dict[str, dict[str, Any]]:
    """Instant -> hudi-rs' commit metadata of each completed write (commit, deltacommit, replacecommit)."""
    tl = hudi.HudiTable(str(base)).get_timeline()
    writes = (*tl.get_completed_commits(), *tl.get_completed_deltacommits(), *tl.get_completed_replacecommits())
    return {i.timestamp: {**json.loads(tl.get_instant_metadata_in_json(i)), "action": i.action} for i in writes}


def rs_commit_stats(base: Path) -> dict[str, tuple]:
    """Instant -> (COMMIT_COLUMNS) of each completed write, summed from hudi-rs' commit metadata."""
    out = {}
    for instant, meta in rs_writes(base).items():
        stats = [s for group in meta["partitionToWriteStats"].values() for s in group]
        out[instant] = (meta["action"], meta["operationType"], len(stats), sum(s["numWrites"] for s in stats),
                        sum(s["numInserts"] for s in stats), sum(s["numUpdateWrites"] for s in stats),
                        sum(s["numDeletes"] for s in stats), sum(s["totalWriteBytes"] for s in stats))
    return out


def test_commits_match_hudi_rs(table, capsys):
    base = table(V8_TRIPS)
    commits = json.loads(ok(capsys, "commits", base, "--json"))
    assert [(c["instant"], c["completed"]) for c in commits] == write_times(base)
    assert {c["instant"]: tuple(c[k] for k in COMMIT_COLUMNS) for c in commits} == rs_commit_stats(base)
    assert len(commits) == 7 and commits[0]["inserts"] == 8  # the catalogue: 8 inserts first
    lines = ok(capsys, "commits", base).splitlines()
    assert lines[0].split() == ["instant", "completed", "action", "operation", "files", "writes", "inserts",
                                "updates", "deletes", "bytes"]
    assert len(lines) == 8 and lines[-1].split()[:2] == list(write_times(base)[-1])


def test_file_groups_match_hudi_rs(table, capsys):
    base = table(V8_TRIPS)
    groups = json.loads(ok(capsys, "file-groups", base, "--json"))
    slices = hudi.HudiTable(str(base)).get_file_slices(
        hudi.HudiReadOptions(hudi_options={"hoodie.metadata.enable": "false"}))
    assert sorted((g["partition"], g["file_id"], g["base_file"], g["log_files"], g["bytes"]) for g in groups) == sorted(
        (s.partition_path, s.file_id, s.base_file_name, len(s.log_file_names), s.total_size_bytes()) for s in slices)
    for g in groups:
        assert g["base_file"].startswith(g["file_id"] + "_") and g["base_instant"] in g["base_file"]
        assert g["slices"] == 2  # the catalogue's compaction opened a second slice in every file group
    lines = ok(capsys, "file-groups", base).splitlines()
    assert lines[0].split() == ["partition", "file_id", "slices", "base_instant", "log_files", "bytes"]
    assert len(lines) == 1 + len(groups) == 4


# -- the archived timeline -------------------------------------------------------------------------


def archive(base: Path, until: str) -> list[str]:
    """What Hudi's archiver does to the table (no fixture has an archived timeline; Spark-written ones are
    archived in tests/integration), as hudi-v8.md §1.5 describes its files: the completed instants requested
    up to `until` become rows of one LSM history file (`HoodieLSMTimelineInstant`: the completed instant's
    bytes as metadata, the requested file's as plan), listed by manifest_1 and `_version_`; then their
    files leave the active timeline. Returns their requested times."""
    timeline = base / ".hoodie" / "timeline"
    done = {m[1]: (m[2], m[3], f) for f in timeline.iterdir()
            if (m := re.fullmatch(r"(\d{17})_(\d{17})\.([a-z]+)", f.name)) and m[1] <= until}
    rows = []
    for instant, (completed, action, f) in sorted(done.items()):
        plan = [p.read_bytes() for p in timeline.glob(f"{instant}.*.requested")]
        rows.append({"instantTime": instant, "completionTime": completed, "action": action,
                     "metadata": f.read_bytes(), "plan": plan[0] if plan else None, "version": 1})
    schema = pa.schema([("instantTime", pa.string()), ("completionTime", pa.string()), ("action", pa.string()),
                        ("metadata", pa.binary()), ("plan", pa.binary()), ("version", pa.int32())])
    history = timeline / "history"
    name = f"{min(done)}_{max(done)}_0.parquet"
    pq.write_table(pa.Table.from_pylist(rows, schema=schema), history / name)
    (history / "manifest_1").write_text(json.dumps({"files": [{"fileName": name,
                                                                "fileLen": (history / name).stat().st_size}]}))
    (history / "_version_").write_text("1")
    for f in timeline.iterdir():
        if f.is_file() and f.name[:17] in done:
            f.unlink()
    return sorted(done)


@pytest.fixture
def archived_trips(table, tmp_path) -> tuple[Path, Path, list[str]]:
    """(the fixture, a copy whose instants up to its compaction are archived, the archived instants)."""
    base = table(V8_TRIPS)
    copy = Path(shutil.copytree(base, tmp_path / base.name))
    compaction = next(f.name[:17] for f in (base / ".hoodie/timeline").iterdir() if ".compaction." in f.name)
    return base, copy, archive(copy, compaction)


def test_commits_with_the_archived_timeline(archived_trips, capsys):
    base, copy, archived = archived_trips
    assert len(archived) == 7  # five deltacommits, the indexing and the compaction
    commits = json.loads(ok(capsys, "commits", copy, "--archived", "--json"))
    assert [(c["instant"], c["completed"]) for c in commits] == write_times(base)  # oldest first, all of them
    assert {c["instant"]: tuple(c[k] for k in COMMIT_COLUMNS) for c in commits} == rs_commit_stats(base)
    assert [c["archived"] for c in commits] == [c["instant"] in archived for c in commits] == [True] * 6 + [False]
    active = json.loads(ok(capsys, "commits", copy, "--json"))
    assert [c["instant"] for c in active] == [commits[-1]["instant"]] and "archived" not in active[0]
    lines = ok(capsys, "commits", copy, "--archived").splitlines()
    assert lines[0].split()[-1] == "archived"
    assert [line.split()[-1] for line in lines[1:]] == ["True"] * 6 + ["False"]


def test_timeline_with_the_archived_timeline(archived_trips, capsys):
    base, copy, archived = archived_trips
    before = json.loads(ok(capsys, "timeline", base, "--json"))
    entries = json.loads(ok(capsys, "timeline", copy, "--archived", "--json"))
    old = [e for e in entries if e["archived"]]
    # an archived instant is one completed row, without a file on the active timeline
    assert [(e["requested"], e["action"], e["state"], e["completed"], e["file"]) for e in old] == [
        (e["requested"], e["action"], "COMPLETED", e["completed"], None)
        for e in before if e["state"] == "COMPLETED" and e["requested"] in archived]
    assert [{k: v for k, v in e.items() if k != "archived"} for e in entries if not e["archived"]] == json.loads(
        ok(capsys, "timeline", copy, "--json")) == [e for e in before if e["requested"] not in archived]
    assert entries == sorted(entries, key=lambda e: (e["requested"], ["REQUESTED", "INFLIGHT", "COMPLETED"].index(
        e["state"])))


def test_an_instant_on_both_timelines_shows_once(archived_trips, capsys):
    """Hudi's archiver writes the history before it deletes the active files: a look between sees both."""
    base, copy, archived = archived_trips
    last = archived[-1]
    for f in (base / ".hoodie/timeline").glob(f"{last}*"):
        shutil.copy(f, copy / ".hoodie/timeline")
    commits = json.loads(ok(capsys, "commits", copy, "--archived", "--json"))
    assert [c["instant"] for c in commits] == [i for i, _ in write_times(base)]
    assert [c["archived"] for c in commits if c["instant"] == last] == [False]


def test_archived_of_a_version_6_table(table, tmp_path, capsys):
    """Layout 1's archive is log files this reader does not read: refused when it holds any, not left out."""
    base = Path(shutil.copytree(table(V6_ROLLBACK), tmp_path / "t"))
    assert not any((base / ".hoodie/archived").iterdir())
    assert [e["archived"] for e in json.loads(ok(capsys, "commits", base, "--archived", "--json"))] == [False] * 2
    (base / ".hoodie/archived/.commits_.archive.1_1-0-1").write_bytes(b"#HUDI#")
    for command in ("commits", "timeline", "compactions"):
        rc, out, err = run(capsys, command, base, "--archived")
        assert rc == 2 and out == ""
        assert_one_line_error(err)
        assert ".hoodie/archived" in err


# -- compactions and clusterings -------------------------------------------------------------------


def rs_service_runs(base: Path) -> dict[str, list[tuple]]:
    """Service -> (instant, file groups, files, writes, bytes) of each completed run, from hudi-rs' commit
    metadata: a compaction's commit says COMPACT, a clustering's replacecommit CLUSTER."""
    out: dict[str, list[tuple]] = {"compactions": [], "clusterings": []}
    for instant, meta in sorted(rs_writes(base).items()):
        stats = [s for group in meta["partitionToWriteStats"].values() for s in group]
        written = (len(stats), sum(s["numWrites"] for s in stats), sum(s["totalWriteBytes"] for s in stats))
        if meta["operationType"] == "COMPACT":
            out["compactions"].append((instant, len({s["fileId"] for s in stats}), *written))
        elif meta["operationType"] == "CLUSTER":
            replaced = sum(len(ids) for ids in meta["partitionToReplaceFileIds"].values())
            out["clusterings"].append((instant, replaced, *written))
    return out


def service_rows(capsys, command: str, base: Path, *flags: str) -> list[dict[str, Any]]:
    return json.loads(ok(capsys, command, base, "--json", *flags))


@pytest.mark.parametrize("relative", [V9_TXNS, V8_TRIPS, "sample_table/cow/v9_txns_simple_nometa"])
def test_compactions_and_clusterings_match_hudi_rs(table, capsys, relative):
    base = table(relative)
    theirs = rs_service_runs(base)
    done = {m[1]: m[2] for f in (base / ".hoodie/timeline").iterdir()  # completion times of every action
            if (m := re.fullmatch(r"(\d{17})_(\d{17})\.[a-z]+", f.name))}
    for command in ("compactions", "clusterings"):
        rows = service_rows(capsys, command, base)
        assert [(r["instant"], r["file_groups"], r["files"], r["writes"], r["bytes"]) for r in rows] == theirs[command]
        assert all((r["status"], r["state"], r["completed"], r["archived"]) == ("completed", "COMPLETED",
                                                                                done[r["instant"]], False)
                   for r in rows)
    # the catalogue: MERGE_ON_READ txns compact once, then cluster once (an insert overwrite is no clustering)
    expected = {V9_TXNS: (1, 1), V8_TRIPS: (1, 0), "sample_table/cow/v9_txns_simple_nometa": (0, 1)}[relative]
    assert (len(theirs["compactions"]), len(theirs["clusterings"])) == expected
    lines = ok(capsys, "compactions", base).splitlines()
    assert lines[0].split() == ["instant", "status", "state", "completed", "file_groups", "files", "writes", "bytes"]
    assert len(lines) == 1 + expected[0]


def test_pending_compaction_and_clustering(table, tmp_path, capsys):
    """Their commits taken away, the compaction and the clustering are their plans again: pending, with the
    file groups the commits (as hudi-rs reads them) compacted and replaced."""
    base = table(V9_TXNS)
    theirs = rs_service_runs(base)
    copy = Path(shutil.copytree(base, tmp_path / base.name))
    for command in ("compactions", "clusterings"):
        [(instant, groups, *_)] = theirs[command]
        [completed] = (copy / ".hoodie/timeline").glob(f"{instant}_*")
        completed.unlink()
        rows = service_rows(capsys, command, copy)
        assert [(r["instant"], r["status"], r["state"], r["completed"], r["file_groups"], r["writes"], r["bytes"])
                for r in rows] == [(instant, "pending", "INFLIGHT", None, groups, None, None)]
        plans = json.loads(ok(capsys, "plans", copy, "--json"))
        assert [len(p["file_groups"]) for p in plans if p["instant"] == instant] == [groups]


def test_compactions_with_the_archived_timeline(archived_trips, capsys):
    base, copy, _ = archived_trips
    assert service_rows(capsys, "compactions", copy) == []  # it was archived
    [row] = service_rows(capsys, "compactions", copy, "--archived")
    assert [(row["instant"], row["file_groups"], row["files"], row["writes"], row["bytes"])] == rs_service_runs(
        base)["compactions"]
    assert (row["status"], row["archived"]) == ("completed", True)


# -- desc ------------------------------------------------------------------------------------------

DESCRIBED = [V8_TRIPS, V9_TXNS, V6_MOR, V8_PARTITIONED, "sample_table/cow/v9_timebasedkeygen_epochmillis",
             "sample_table/cow/v6_empty"]


@pytest.mark.parametrize("relative", DESCRIBED)
def test_desc_matches_hudi_rs(table, capsys, relative):
    base = table(relative)
    rs = hudi.HudiTableBuilder.from_base_uri(str(base)).build()
    props = rs.hudi_options()  # hoodie.properties, as hudi-rs read it

    def listed(*keys: str) -> list[str]:
        raw = next((props[k] for k in keys if props.get(k)), "")
        return [f.split(":")[0] for f in raw.split(",") if f]  # a custom key generator's `field:TYPE`

    described = json.loads(ok(capsys, "desc", base, "--json"))
    assert described == {
        "name": rs.table_name,
        "database": props.get("hoodie.database.name"),
        "base_path": str(base),
        "table_type": rs.table_type,
        "table_version": int(props["hoodie.table.version"]),
        "timeline_layout_version": int(props.get("hoodie.timeline.layout.version", "1")),
        "record_key_fields": listed("hoodie.table.recordkey.fields"),
        "partition_fields": listed("hoodie.table.partition.fields"),
        "ordering_fields": listed("hoodie.table.ordering.fields", "hoodie.table.precombine.field"),
        "key_generator": props.get("hoodie.table.keygenerator.class") or props.get("hoodie.table.keygenerator.type"),
        "metadata_partitions": listed("hoodie.table.metadata.partitions"),
        "index_type": None,  # a writers' setting: no fixture's hoodie.properties records one
        "lock_provider": None,
        "columns": [{"name": f.name, "type": str(f.type)} for f in rs.get_schema()],
    }
    text = ok(capsys, "desc", base).splitlines()
    assert text[0].split() == ["name", rs.table_name]
    assert text[text.index("") + 1].split() == ["column", "type"]
    assert [line.split(None, 1)[0] for line in text[text.index("") + 2:]] == rs.get_schema().names


def test_desc_names_the_writers_lock_provider_and_index(table, tmp_path, capsys):
    base = table(V8_TRIPS)
    props = tmp_path / "writers.properties"
    props.write_text("hoodie.write.lock.provider=org.apache.hudi.client.transaction.lock.ZookeeperBasedLockProvider\n"
                     "hoodie.index.type=SIMPLE\n")
    described = json.loads(ok(capsys, "desc", base, "--props", props, "--hoodie-conf", "hoodie.index.type=BUCKET",
                              "--json"))
    assert (described["lock_provider"], described["index_type"]) == (
        "org.apache.hudi.client.transaction.lock.ZookeeperBasedLockProvider", "BUCKET")  # --hoodie-conf wins
    assert "lock_provider            org.apache.hudi.client.transaction.lock.ZookeeperBasedLockProvider" in ok(
        capsys, "desc", base, "--props", props)


# -- check duplicates ------------------------------------------------------------------------------


@pytest.mark.parametrize("relative", [V8_PARTITIONED, V8_TRIPS])
def test_check_duplicates_of_a_table_holding_each_key_once_exits_0(table, capsys, relative):
    base = table(relative)
    found = json.loads(ok(capsys, "check", "duplicates", base, "--json"))
    assert found["records"] == hudi_rs(base).num_rows  # type: ignore[union-attr]
    assert (found["found"], found["within_partitions"], found["across_partitions"]) == (False, [], [])
    assert ok(capsys, "check", "duplicates", base).startswith(f"{found['records']} record(s) read; 0 key(s) held")


def test_check_duplicates_refuses_a_table_without_meta_fields(table, tmp_path, capsys):
    base = shutil.copytree(table(V8_COW), tmp_path / "nometa")
    with open(base / ".hoodie" / "hoodie.properties", "a") as props:
        props.write("hoodie.populate.meta.fields=false\n")
    rc, out, err = run(capsys, "check", "duplicates", base)
    assert (rc, out) == (2, "")
    assert_one_line_error(err)
    assert "hoodie.populate.meta.fields=false" in err and "_hoodie_record_key" in err


def test_version(capsys):
    with pytest.raises(SystemExit) as info:
        main(["--version"])
    assert info.value.code == 0
    assert capsys.readouterr().out == f"hudi-ops {importlib.metadata.version('hudi-ops')}\n"


# -- errors ----------------------------------------------------------------------------------------


def _bad_cases(base: Path, tmp: Path) -> dict[str, tuple[list[str | Path], str]]:
    """case -> (arguments, what the error must name)"""
    return {
        "table not found (read)": (["read", tmp / "nope"], "nope"),
        "table not found (timeline)": (["timeline", tmp / "nope"], "nope"),
        "table not found (commits)": (["commits", tmp / "nope"], "nope"),
        "table not found (file-groups)": (["file-groups", tmp / "nope", "--json"], "nope"),
        "folder without a table": (["read", tmp], "hoodie.properties"),
        "folder without a table (desc)": (["desc", tmp], f"no Hudi table at '{tmp}': .hoodie/hoodie.properties is "
                                                         "missing"),
        "path that does not exist": (["compactions", tmp / "nope"], f"'{tmp / 'nope'}': the path does not exist"),
        "file instead of a table": (["clusterings", tmp / "file.txt"], "it is a file, not a table's folder"),
        "bad --hoodie-conf (desc)": (["desc", base, "--hoodie-conf", "hoodie.index.type"], "key=value"),
        "filter without op": (["read", base, "--filter", "city"], "COLUMN OP VALUE"),
        "filter with a bad op": (["read", base, "--filter", "id ~ 1"], "COLUMN OP VALUE"),
        "filter on an unknown column": (["read", base, "--filter", "nope = 1"], "nope"),
        "filter value of the wrong type": (["read", base, "--filter", "id = abc"], "abc"),
        "unknown column": (["read", base, "--columns", "id,nope"], "nope"),
        "bad as-of": (["read", base, "--as-of", "yesterday"], "yesterday"),
        "bad incremental begin": (["read", base, "--incremental", "--begin", "yesterday"], "yesterday"),
        "incremental without begin": (["read", base, "--incremental"], "--begin"),
        "parquet without output": (["read", base, "--format", "parquet"], "--output"),
        "unwritable output": (["read", base, "--output", tmp / "no" / "such" / "dir.jsonl"], "--output"),
    }


CASES = ["table not found (read)", "table not found (timeline)", "table not found (commits)",
         "table not found (file-groups)", "folder without a table", "folder without a table (desc)",
         "path that does not exist", "file instead of a table", "bad --hoodie-conf (desc)",
         "filter without op", "filter with a bad op",
         "filter on an unknown column", "filter value of the wrong type", "unknown column", "bad as-of",
         "bad incremental begin", "incremental without begin", "parquet without output", "unwritable output"]


@pytest.mark.parametrize("case", CASES)
def test_bad_input_exits_2_with_one_line_naming_the_problem(table, tmp_path, capsys, case):
    base = table(V8_COW)
    cases = _bad_cases(base, tmp_path)
    assert set(CASES) == set(cases)
    args, needle = cases[case]
    (tmp_path / "file.txt").write_text("not a table")
    before = sorted(p.name for p in (base / ".hoodie" / "timeline").iterdir())
    rc, out, err = run(capsys, *args)
    assert rc == 2, err
    assert_one_line_error(err)
    assert needle in err
    assert out == ""
    assert sorted(p.name for p in (base / ".hoodie" / "timeline").iterdir()) == before


def test_storage_errors_are_one_line(table, capsys, monkeypatch):
    """An OSError of the table's storage (a refused listing, an object store's error), and an error nobody
    foresaw, end the command with one line and exit 1, not a traceback."""
    base = table(V8_COW)

    def refuse(self, rel_dir):
        raise PermissionError(13, "Permission denied", rel_dir)

    monkeypatch.setattr(Storage, "list_files", refuse)
    rc, out, err = run(capsys, "timeline", base)
    assert (rc, out) == (1, "")
    assert_one_line_error(err)
    assert "cannot read the table's storage" in err and "Permission denied" in err
    monkeypatch.setattr(Storage, "list_files", lambda self, rel_dir: 1 / 0)
    rc, out, err = run(capsys, "commits", base)
    assert (rc, out) == (1, "")
    assert_one_line_error(err)
    assert "ZeroDivisionError" in err


@pytest.mark.parametrize("args", [
    ["read"],  # no path
    ["read", "t", "--format", "csv"],
    ["timeline"],
    ["write", "t", "--input", "x.jsonl"],  # Apache Hudi's Spark jobs write, not this command
])
def test_usage_errors_exit_2(capsys, args):
    with pytest.raises(SystemExit) as info:
        main(args)
    assert info.value.code == 2
    assert "usage: hudi-ops" in capsys.readouterr().err


# -- the installed console script ------------------------------------------------------------------


def test_console_script(table, tmp_path):
    exe = shutil.which("hudi-ops", path=os.path.dirname(sys.executable))
    assert exe, "the hudi-ops console script is not installed next to the interpreter"
    base = table(V8_COW)

    def call(*args: str | Path) -> subprocess.CompletedProcess[str]:
        return subprocess.run([exe, *map(str, args)], capture_output=True, text=True, timeout=120)

    r = call("read", base, "--columns", "id,name", "--filter", "isActive = false")
    assert r.returncode == 0, r.stderr
    assert rows_of(r.stdout) == [{"id": 1, "name": "Alice"}, {"id": 2, "name": "Bob"}]
    r = call("timeline", tmp_path / "missing")
    assert r.returncode == 2
    assert_one_line_error(r.stderr)


def module_command(*args: str | Path) -> list[str]:
    return [sys.executable, "-m", "hudi_ops.cli", *map(str, args)]


def test_a_path_without_a_table_through_a_real_process(tmp_path):
    r = subprocess.run(module_command("commits", tmp_path), capture_output=True, text=True, timeout=120)
    assert (r.returncode, r.stdout) == (2, "")
    assert_one_line_error(r.stderr)
    assert str(tmp_path) in r.stderr and ".hoodie/hoodie.properties is missing" in r.stderr


def test_a_closed_pipe_ends_quietly(table):
    """The reader gone before the first line: 141 (128 + SIGPIPE), as the shell reports for any program a
    closed pipe stopped, and nothing on standard error."""
    read_end, write_end = os.pipe()
    os.close(read_end)  # a reader that has already gone, whenever the command writes
    try:
        r = subprocess.run(module_command("timeline", table(V8_TRIPS)), stdout=write_end, stderr=subprocess.PIPE,
                           text=True, timeout=120)
    finally:
        os.close(write_end)
    assert (r.returncode, r.stderr) == (141, "")


def test_head_of_the_output(table):
    base = table(V8_TRIPS)
    exe = shutil.which("hudi-ops", path=os.path.dirname(sys.executable))
    r = subprocess.run(["bash", "-c", f'set -o pipefail; "{exe}" timeline --archived "{base}" | head -1'],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode in (0, 141)  # 141 when head was gone before the command's last write
    assert r.stderr == ""
    assert r.stdout.split() == ["requested", "action", "state", "completed", "file", "archived"]


def test_an_unexpected_error_is_one_line_unless_its_traceback_is_asked_for(monkeypatch, capsys, tmp_path):
    import hudi_ops.cli as cli

    def broken(args):
        raise TypeError("a bug")

    monkeypatch.setattr(cli, "_timeline", broken)
    assert main(["timeline", str(tmp_path)]) == 1
    assert capsys.readouterr().err == ("hudi-ops: error: unexpected TypeError: a bug (set HUDI_OPS_DEBUG=1 for its "
                                       "traceback)\n")
    monkeypatch.setenv("HUDI_OPS_DEBUG", "1")
    with pytest.raises(TypeError, match="a bug"):
        main(["timeline", str(tmp_path)])
