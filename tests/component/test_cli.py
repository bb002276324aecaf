"""The `hudi-ops` command: create, write, read and inspect a table, and fail with exit code 2 and one
line on standard error when the input is bad."""

from __future__ import annotations

import json
import os
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

USER = ["id", "ts", "city", "v"]


def run(capsys: pytest.CaptureFixture[str], *args: str | Path) -> tuple[int, str, str]:
    rc = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return rc, out, err


def ok(capsys: pytest.CaptureFixture[str], *args: str | Path) -> str:
    rc, out, err = run(capsys, *args)
    assert rc == 0, err
    return out


def jsonl(text: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def user(records: list[dict[str, Any]], cols: list[str] = USER) -> list[dict[str, Any]]:
    return sorted(({c: r[c] for c in cols} for r in records), key=lambda r: tuple(str(r[c]) for c in cols))


def write_jsonl(path: Path, records: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def hudi_rs_user_rows(base: Path) -> list[dict[str, Any]]:
    batches = hudi.HudiTable(str(base)).read()
    return user(pa.Table.from_batches(batches).to_pylist()) if batches else []


def assert_one_line_error(err: str) -> None:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("hudi-ops: error: "), err
    assert "Traceback" not in err


@pytest.fixture
def table(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    base = tmp_path / "trips"
    out = ok(capsys, "create", base, "--name", "trips", "--record-key", "id", "--partition-field", "city",
             "--ordering-field", "ts", "--hive-style")
    created = json.loads(out)
    assert created["table_version"] == 8 and Path(created["created"].removeprefix("file://")) == base
    return base


def _commit(out: str) -> dict[str, Any]:
    result = json.loads(out)
    assert set(result) >= {"instant_time", "completion_time", "operation", "num_writes", "num_inserts",
                           "num_updates", "num_deletes", "files_written"}
    return result


@pytest.fixture
def two_commits(table: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[Path, dict, dict]:
    a = write_jsonl(tmp_path / "a.jsonl", [
        {"id": 1, "ts": 1, "city": "sf", "v": "a"}, {"id": 2, "ts": 1, "city": "nyc", "v": "b"},
    ])
    first = _commit(ok(capsys, "write", table, "--input", a))
    b = tmp_path / "b.csv"
    b.write_text("id,ts,city,v\n1,2,sf,A\n3,1,la,c\n")
    second = _commit(ok(capsys, "write", table, "--input", b))
    return table, first, second


# -- create and write ------------------------------------------------------------------------------


def test_create_writes_a_version_8_table(table: Path) -> None:
    props = (table / ".hoodie" / "hoodie.properties").read_text()
    assert "hoodie.table.version=8" in props
    assert "hoodie.table.recordkey.fields=id" in props
    assert "hoodie.table.partition.fields=city" in props
    assert "hoodie.table.precombine.field=ts" in props
    assert "hoodie.datasource.write.hive_style_partitioning=true" in props


def test_create_complex_key_and_several_partition_fields(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    base = tmp_path / "t"
    ok(capsys, "create", base, "--name", "t", "--record-key", "id,kind", "--partition-field", "y,m")
    props = (base / ".hoodie" / "hoodie.properties").read_text()
    assert "hoodie.table.recordkey.fields=id,kind" in props and "hoodie.table.partition.fields=y,m" in props
    assert "hoodie.record.merge.mode=COMMIT_TIME_ORDERING" in props
    data = write_jsonl(tmp_path / "d.jsonl", [{"id": 1, "kind": "a", "y": "2026", "m": "01"}])
    ok(capsys, "write", base, "--input", data)
    [row] = jsonl(ok(capsys, "read", base))
    assert row["_hoodie_record_key"] == "id:1,kind:a" and row["_hoodie_partition_path"] == "2026/01"


def test_write_jsonl_csv_and_parquet(two_commits: tuple[Path, dict, dict], tmp_path: Path,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    base, first, second = two_commits
    assert (first["operation"], first["num_inserts"], first["num_updates"]) == ("UPSERT", 2, 0)
    assert (second["num_inserts"], second["num_updates"]) == (1, 1)
    assert second["instant_time"] > first["completion_time"]
    p = tmp_path / "c.parquet"
    pq.write_table(pa.table({"id": [4], "ts": [1], "city": ["sf"], "v": ["d"]}), p)
    third = _commit(ok(capsys, "write", base, "--input", p, "--operation", "insert"))
    assert (third["operation"], third["num_inserts"]) == ("INSERT", 1)
    got = user(jsonl(ok(capsys, "read", base)))
    assert got == [
        {"id": 1, "ts": 2, "city": "sf", "v": "A"}, {"id": 2, "ts": 1, "city": "nyc", "v": "b"},
        {"id": 3, "ts": 1, "city": "la", "v": "c"}, {"id": 4, "ts": 1, "city": "sf", "v": "d"},
    ]
    assert hudi_rs_user_rows(base) == got


def test_write_delete_and_bulk_insert(two_commits: tuple[Path, dict, dict], tmp_path: Path,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    base, _, _ = two_commits
    keys = write_jsonl(tmp_path / "k.jsonl", [{"id": 1, "city": "sf"}, {"id": 9, "city": "sf"}])
    result = _commit(ok(capsys, "write", base, "--operation", "delete", "--input", keys))
    assert (result["operation"], result["num_deletes"]) == ("DELETE", 1)
    more = write_jsonl(tmp_path / "m.jsonl", [{"id": 5, "ts": 1, "city": "nyc", "v": "e"}])
    result = _commit(ok(capsys, "write", base, "--operation", "bulk_insert", "--input", more))
    assert result["operation"] == "BULK_INSERT"
    assert [r["id"] for r in user(jsonl(ok(capsys, "read", base)))] == [2, 3, 5]


def _file_groups(capsys: pytest.CaptureFixture[str], base: Path) -> list[dict[str, Any]]:
    return json.loads(ok(capsys, "file-groups", base, "--json"))


def test_props_file_and_hoodie_conf(table: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    props = tmp_path / "w.props"
    props.write_text("# write options\nhoodie.parquet.small.file.limit=0\n\nhoodie.index.bloom.num_entries=100\n")
    for i in range(2):
        data = write_jsonl(tmp_path / f"p{i}.jsonl", [{"id": i, "ts": 1, "city": "sf", "v": "x"}])
        ok(capsys, "write", table, "--input", data, "--props", props)
    assert len(_file_groups(capsys, table)) == 2  # small.file.limit=0 from the props file: a new group each
    # --hoodie-conf overrides the props file: the small file takes the insert
    data = write_jsonl(tmp_path / "p2.jsonl", [{"id": 2, "ts": 1, "city": "sf", "v": "x"}])
    ok(capsys, "write", table, "--input", data, "--props", props,
       "--hoodie-conf", "hoodie.parquet.small.file.limit=104857600")
    groups = _file_groups(capsys, table)
    assert len(groups) == 2 and sorted(g["slices"] for g in groups) == [1, 2]
    # the write options reach the writer: a 100-entry bloom filter is far smaller than the default
    sizes = [g["bytes"] for g in groups]
    assert max(sizes) < 50_000
    assert hudi_rs_user_rows(table) == user(jsonl(ok(capsys, "read", table)))


# -- read ------------------------------------------------------------------------------------------


def test_read_columns_and_filters(two_commits: tuple[Path, dict, dict], capsys: pytest.CaptureFixture[str]) -> None:
    base, _, _ = two_commits
    rows = jsonl(ok(capsys, "read", base))
    assert len(rows) == 3 and list(rows[0])[:5] == [
        "_hoodie_commit_time", "_hoodie_commit_seqno", "_hoodie_record_key", "_hoodie_partition_path",
        "_hoodie_file_name"]
    assert jsonl(ok(capsys, "read", base, "--columns", "id,v", "--filter", "city = sf")) == [{"id": 1, "v": "A"}]
    got = jsonl(ok(capsys, "read", base, "--columns", "id", "--filter", "id > 1"))
    assert sorted(r["id"] for r in got) == [2, 3]
    got = jsonl(ok(capsys, "read", base, "--columns", "id", "--filter", "city = sf", "--filter", "ts >= 2"))
    assert got == [{"id": 1}]
    assert all(set(r) == {"id"} for r in got)


def test_read_as_of_and_incremental(two_commits: tuple[Path, dict, dict], capsys: pytest.CaptureFixture[str]) -> None:
    base, first, second = two_commits
    old = user(jsonl(ok(capsys, "read", base, "--as-of", first["instant_time"])))
    assert old == [{"id": 1, "ts": 1, "city": "sf", "v": "a"}, {"id": 2, "ts": 1, "city": "nyc", "v": "b"}]
    assert jsonl(ok(capsys, "read", base, "--as-of", "20000101000000000")) == []
    inc = jsonl(ok(capsys, "read", base, "--incremental", "--begin", first["completion_time"]))
    assert user(inc) == [{"id": 1, "ts": 2, "city": "sf", "v": "A"}, {"id": 3, "ts": 1, "city": "la", "v": "c"}]
    assert {r["_hoodie_commit_time"] for r in inc} == {second["instant_time"]}
    inc = jsonl(ok(capsys, "read", base, "--incremental", "--begin", "20000101000000000",
                   "--end", first["completion_time"]))
    assert sorted(r["id"] for r in inc) == [1, 2]
    assert jsonl(ok(capsys, "read", base, "--incremental", "--begin", second["completion_time"])) == []


def test_read_to_parquet_and_jsonl_files(two_commits: tuple[Path, dict, dict], tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    base, _, _ = two_commits
    out = tmp_path / "out.parquet"
    assert ok(capsys, "read", base, "--format", "parquet", "--output", out, "--columns", "id,city,v") == ""
    got = pq.read_table(out)
    assert got.column_names == ["id", "city", "v"]
    assert sorted(got.column("id").to_pylist()) == [1, 2, 3]
    out = tmp_path / "out.jsonl"
    assert ok(capsys, "read", base, "--output", out) == ""
    assert user(jsonl(out.read_text())) == user(jsonl(ok(capsys, "read", base)))


# -- inspect ---------------------------------------------------------------------------------------


def test_timeline(two_commits: tuple[Path, dict, dict], capsys: pytest.CaptureFixture[str]) -> None:
    base, first, second = two_commits
    entries = json.loads(ok(capsys, "timeline", base, "--json"))
    assert len(entries) == 6
    done = [e for e in entries if e["state"] == "COMPLETED"]
    assert [(e["requested"], e["completed"]) for e in done] == [
        (first["instant_time"], first["completion_time"]), (second["instant_time"], second["completion_time"])]
    assert {e["file"] for e in entries} >= {
        f"{first['instant_time']}.commit.requested", f"{first['instant_time']}.inflight",
        f"{second['instant_time']}_{second['completion_time']}.commit"}
    text = ok(capsys, "timeline", base)
    lines = text.splitlines()
    assert lines[0].split() == ["requested", "action", "state", "completed", "file"]
    assert len(lines) == 7
    assert any(second["completion_time"] in line and "COMPLETED" in line for line in lines)


def test_commits(two_commits: tuple[Path, dict, dict], capsys: pytest.CaptureFixture[str]) -> None:
    base, first, second = two_commits
    commits = json.loads(ok(capsys, "commits", base, "--json"))
    assert [(c["instant"], c["completed"], c["operation"]) for c in commits] == [
        (first["instant_time"], first["completion_time"], "UPSERT"),
        (second["instant_time"], second["completion_time"], "UPSERT")]
    assert (commits[1]["files"], commits[1]["writes"], commits[1]["inserts"], commits[1]["updates"]) == (2, 2, 1, 1)
    lines = ok(capsys, "commits", base).splitlines()
    assert lines[0].split()[:4] == ["instant", "completed", "action", "operation"]
    assert len(lines) == 3 and lines[2].split()[0] == second["instant_time"]


def test_file_groups(two_commits: tuple[Path, dict, dict], capsys: pytest.CaptureFixture[str]) -> None:
    base, first, second = two_commits
    groups = {g["partition"]: g for g in _file_groups(capsys, base)}
    assert set(groups) == {"city=sf", "city=nyc", "city=la"}
    assert groups["city=sf"]["slices"] == 2 and groups["city=sf"]["base_instant"] == second["instant_time"]
    assert groups["city=nyc"]["base_instant"] == first["instant_time"]
    for p, g in groups.items():
        assert (base / p / g["base_file"]).stat().st_size == g["bytes"]
        assert g["base_file"].startswith(g["file_id"] + "_")
    lines = ok(capsys, "file-groups", base).splitlines()
    assert lines[0].split() == ["partition", "file_id", "slices", "base_instant", "log_files", "bytes"]
    assert len(lines) == 4


# -- errors ----------------------------------------------------------------------------------------


def _bad_cases(base: Path, tmp: Path) -> dict[str, list[str | Path]]:
    null_key = write_jsonl(tmp / "null.jsonl", [{"id": 7, "ts": 1, "city": "sf", "v": "x"},
                                                {"id": None, "ts": 1, "city": "sf", "v": "y"}])
    good = write_jsonl(tmp / "good.jsonl", [{"id": 8, "ts": 1, "city": "sf", "v": "x"}])
    return {
        "missing input file": ["write", base, "--input", tmp / "nope.jsonl"],
        "unknown input format": ["write", base, "--input", tmp / "a.txt"],
        "bad hoodie-conf": ["write", base, "--input", good, "--hoodie-conf", "no-equals-sign"],
        "bad hoodie-conf value": ["write", base, "--input", good, "--hoodie-conf", "hoodie.index.type=NOPE"],
        "missing props file": ["write", base, "--input", good, "--props", tmp / "nope.props"],
        "table not found (write)": ["write", tmp / "nope", "--input", good],
        "table not found (read)": ["read", tmp / "nope"],
        "table not found (timeline)": ["timeline", tmp / "nope"],
        "null key": ["write", base, "--input", null_key],
        "table exists": ["create", base, "--name", "trips", "--record-key", "id"],
        "bad filter": ["read", base, "--filter", "city"],
        "bad as-of": ["read", base, "--as-of", "yesterday"],
        "incremental without begin": ["read", base, "--incremental"],
        "parquet without output": ["read", base, "--format", "parquet"],
    }


CASES = ["missing input file", "unknown input format", "bad hoodie-conf", "bad hoodie-conf value", "missing props file",
         "table not found (write)", "table not found (read)", "table not found (timeline)", "null key", "table exists",
         "bad filter", "bad as-of", "incremental without begin", "parquet without output"]


@pytest.mark.parametrize("case", CASES)
def test_bad_input_exits_2_with_one_line(table: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                         case: str) -> None:
    (tmp_path / "a.txt").write_text("id\n1\n")
    assert set(CASES) == set(_bad_cases(table, tmp_path))
    before = sorted(p.name for p in (table / ".hoodie" / "timeline").iterdir())
    rc, out, err = run(capsys, *_bad_cases(table, tmp_path)[case])
    assert rc == 2, err
    assert_one_line_error(err)
    assert out == ""
    assert sorted(p.name for p in (table / ".hoodie" / "timeline").iterdir()) == before


def test_error_messages_name_the_problem(table: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cases = _bad_cases(table, tmp_path)
    for case, needle in (("missing input file", "nope.jsonl"), ("null key", "'id'"),
                         ("bad hoodie-conf", "no-equals-sign"), ("table not found (read)", "nope")):
        _, _, err = run(capsys, *cases[case])
        assert needle in err, (case, err)


def test_null_key_in_a_one_row_json_file_names_the_field(table: Path, tmp_path: Path,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    """JSON gives a column of only nulls Arrow's null type; the error must still name the key field."""
    data = write_jsonl(tmp_path / "n.jsonl", [{"id": None, "ts": 1, "city": "sf", "v": "x"}])
    rc, _, err = run(capsys, "write", table, "--input", data)
    assert rc == 2
    assert_one_line_error(err)
    assert "'id'" in err


def test_unwritable_output_is_a_one_line_error(two_commits: tuple[Path, dict, dict], tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    base, _, _ = two_commits
    rc, _, err = run(capsys, "read", base, "--output", tmp_path / "no" / "such" / "dir.jsonl")
    assert rc in (1, 2)
    assert_one_line_error(err)


def test_usage_errors_exit_2(table: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["write", str(table)])  # --input missing
    assert info.value.code == 2
    assert "--input" in capsys.readouterr().err
    with pytest.raises(SystemExit) as info:
        main(["write", str(table), "--input", "x.jsonl", "--operation", "merge"])
    assert info.value.code == 2


# -- the installed console script ------------------------------------------------------------------


def test_console_script(tmp_path: Path) -> None:
    exe = shutil.which("hudi-ops", path=os.path.dirname(sys.executable))
    assert exe, "the hudi-ops console script is not installed next to the interpreter"
    base = tmp_path / "t"

    def call(*args: str | Path) -> subprocess.CompletedProcess[str]:
        return subprocess.run([exe, *map(str, args)], capture_output=True, text=True, timeout=120)

    r = call("create", base, "--name", "t", "--record-key", "id", "--ordering-field", "ts")
    assert r.returncode == 0, r.stderr
    data = write_jsonl(tmp_path / "d.jsonl", [{"id": 1, "ts": 1, "v": "a"}, {"id": 1, "ts": 2, "v": "b"}])
    r = call("write", base, "--input", data)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["num_writes"] == 1
    r = call("read", base, "--columns", "id,v")
    assert r.returncode == 0 and jsonl(r.stdout) == [{"id": 1, "v": "b"}]
    r = call("read", tmp_path / "missing")
    assert r.returncode == 2
    assert_one_line_error(r.stderr)
