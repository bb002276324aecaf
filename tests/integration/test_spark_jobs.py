"""Spark engine and the ingest/backfill jobs, on a real local SparkSession."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import hudi
import pyarrow as pa
import pyarrow.parquet as pq

from hudi_ops import HudiTable
from hudi_ops.engine.local import LocalEngine
from hudi_ops.engine.spark import SparkEngine
from hudi_ops.spark.__main__ import main

ROOT = Path(__file__).resolve().parents[2]


def _batch(ids, ts, city) -> pa.Table:
    return pa.table({"id": ids, "ts": ts, "city": city, "fare": [float(i) * 1.5 for i in ids]})


def _rows(table: HudiTable) -> list[tuple]:
    cols = ["id", "ts", "city", "fare", "_hoodie_record_key", "_hoodie_partition_path"]
    ours = sorted(tuple(r.values()) for r in table.read(columns=cols).to_pylist())
    rs = pa.Table.from_batches(hudi.HudiTable(table.base_path).read()).select(cols).to_pylist()
    assert sorted(tuple(r.values()) for r in rs) == ours
    return ours


def test_spark_engine_writes_the_same_table_as_the_local_engine(spark, tmp_path):
    batches = [
        ("bulk_insert", _batch([1, 2, 3, 4], [1, 1, 1, 1], ["sf", "sf", "nyc", "la"])),
        ("upsert", _batch([2, 3, 5, 5], [2, 0, 1, 3], ["sf", "nyc", "la", "la"])),
        ("delete", _batch([4], [9], ["la"])),
    ]
    tables = {}
    for name, engine in (("local", LocalEngine()), ("spark", SparkEngine(spark))):
        t = HudiTable.create(tmp_path / name, name="t", record_key="id", partition_fields=["city"], ordering_field="ts")
        for op, b in batches:
            t.write(b, op, engine=engine)
        tables[name] = t
    assert _rows(tables["spark"]) == _rows(tables["local"])
    assert {r[0] for r in _rows(tables["spark"])} == {1, 2, 3, 5}


def _args(base: Path, source: Path, *extra: str) -> list[str]:
    return ["--target-base-path", str(base), "--target-table", "trips", "--source-path", str(source),
            "--record-key-field", "id", "--partition-path-field", "city", "--source-ordering-field", "ts", *extra]


def _run(spark, capsys, job: str, *args: str) -> tuple[int, dict]:
    code = main([job, *args], spark=spark)
    return code, json.loads(capsys.readouterr().out.strip().splitlines()[-1])


def test_ingest_takes_only_new_files_and_commits_nothing_when_there_are_none(spark, tmp_path, capsys):
    source, base = tmp_path / "in", tmp_path / "t"
    source.mkdir()
    pq.write_table(_batch([1, 2], [1, 1], ["sf", "nyc"]), source / "a.parquet")
    pq.write_table(_batch([3], [1], ["sf"]), source / "b.parquet")
    code, out = _run(spark, capsys, "ingest", *_args(base, source))
    assert code == 0 and out["rows"] == 3 and out["instant"]
    code, again = _run(spark, capsys, "ingest", *_args(base, source))
    assert code == 0 and again["instant"] is None and again["rows"] == 0
    time.sleep(0.01)
    pq.write_table(_batch([1, 4], [5, 1], ["sf", "la"]), source / "c.parquet")
    code, third = _run(spark, capsys, "ingest", *_args(base, source))
    assert code == 0 and third["rows"] == 2
    table = HudiTable.open(base)
    assert {(r[0], r[1]) for r in _rows(table)} == {(1, 5), (2, 1), (3, 1), (4, 1)}
    assert len(table.timeline().completed_writes()) == 2


def test_backfill_writes_its_day_partitions_once(spark, tmp_path, capsys):
    source, base = tmp_path / "in", tmp_path / "t"
    for day, ids in (("2026-01-01", [1, 2]), ("2026-01-02", [3]), ("2026-01-03", [4]), ("2026-01-05", [5])):
        (source / f"dt={day}").mkdir(parents=True)
        pq.write_table(_batch(ids, [1] * len(ids), ["sf"] * len(ids)), source / f"dt={day}" / "part.parquet")
    window = ("--start", "2026-01-01", "--end", "2026-01-03")
    code, out = _run(spark, capsys, "backfill", *_args(base, source), *window)
    assert code == 0 and out["commits"] == 3 and out["rows"] == 4 and out["checkpoint"] == "2026-01-03"
    code, again = _run(spark, capsys, "backfill", *_args(base, source), *window)
    assert code == 0 and again["commits"] == 0
    assert sorted(r[0] for r in _rows(HudiTable.open(base))) == [1, 2, 3, 4]  # day 5 is outside the window


def test_bad_source_data_exits_2_naming_the_problem_and_leaves_the_table(spark, tmp_path, capsys):
    source, base = tmp_path / "in", tmp_path / "t"
    source.mkdir()
    pq.write_table(_batch([1], [1], ["sf"]), source / "good.parquet")
    assert _run(spark, capsys, "ingest", *_args(base, source))[0] == 0
    before = _rows(HudiTable.open(base))

    time.sleep(0.01)
    (source / "broken.parquet").write_bytes(b"not parquet at all")
    code, out = _run(spark, capsys, "ingest", *_args(base, source))
    assert code == 2 and "broken.parquet" in out["message"]
    # beside a good file Spark takes its schema from, the broken one fails while the write reads it
    pq.write_table(_batch([8], [1], ["sf"]), source / "a_good.parquet")
    code, out = _run(spark, capsys, "ingest", *_args(base, source))
    assert code == 2 and "broken.parquet" in out["message"] and "not a Parquet file" in out["message"]
    (source / "broken.parquet").unlink()
    (source / "a_good.parquet").unlink()

    time.sleep(0.01)
    pq.write_table(pa.table({"ts": [1], "city": ["sf"], "fare": [1.0]}), source / "nokey.parquet")
    code, out = _run(spark, capsys, "ingest", *_args(base, source))
    assert code == 2 and "'id'" in out["message"]
    (source / "nokey.parquet").unlink()

    time.sleep(0.01)
    pq.write_table(pa.table({"id": [7], "ts": ["late"], "city": ["sf"], "fare": [1.0]}), source / "badtype.parquet")
    code, out = _run(spark, capsys, "ingest", *_args(base, source))
    assert code == 2 and "'ts'" in out["message"]
    assert _rows(HudiTable.open(base)) == before


def test_python_m_hudi_ops_spark_runs_a_job(tmp_path):
    source, base = tmp_path / "in", tmp_path / "t"
    source.mkdir()
    (source / "a.jsonl").write_text('{"id": 1, "ts": 1, "city": "sf", "fare": 2.5}\n')
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable, "PYSPARK_DRIVER_PYTHON": sys.executable}
    proc = subprocess.run(
        [sys.executable, "-m", "hudi_ops.spark", "ingest", *_args(base, source), "--source-format", "json"],
        capture_output=True, text=True, cwd=ROOT, env=env, timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["status"] == "ok" and out["rows"] == 1
    assert HudiTable.open(base).read(columns=["id"]).column("id").to_pylist() == [1]
