"""Upserts on Spark: hudi-ops against the naive Spark rewrite, measured in the same run.

A table of --rows rows over --partitions partitions (record key `uuid`, partition `city`, ordering
`ts`), kept twice: as a hudi-ops table and as a plain partitioned parquet dataset. Each scenario
updates a fraction of the keys, concentrated in one partition or spread over all, and applies the
same update DataFrame to both:

- hudi-ops: `table.write(updates, "upsert", engine=SparkEngine(spark))`: index lookup, rewrite of
  the touched file groups only, commit;
- naive: read every row, left-anti-join with the updated keys, union the updates, rewrite every
  row to a new dataset version (the same gzip codec Hudi's writer uses);
- hudi-ops with the local engine (Arrow in this process, no Spark), given the same updates as an
  Arrow table: it applies them once more, which rewrites the same files. It shows how much of the
  Spark engine's time is Spark's own per-job cost on this machine.

Prints a table and one JSON line; ratios are naive time / hudi-ops time (>1: hudi-ops is faster).
The two copies are compared row for row at the end, so both really did the same work.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from hudi_ops import HudiTable
from hudi_ops.engine.local import LocalEngine
from hudi_ops.engine.spark import SparkEngine

SCENARIOS = ((0.01, "one"), (0.01, "spread"), (0.10, "one"), (0.10, "spread"))


def _data(n: int, partitions: int, seed: int) -> pa.Table:
    rng = np.random.default_rng(seed)
    cities = np.array([f"city_{p}" for p in range(partitions)])
    return pa.table({
        "uuid": pa.array([f"id-{i:09d}" for i in rng.permutation(n)]),
        "ts": pa.array(rng.integers(0, 10**9, n)),
        "rider": pa.array([f"rider-{x}" for x in rng.integers(0, 10**5, n)]),
        "driver": pa.array([f"driver-{x}" for x in rng.integers(0, 10**4, n)]),
        "fare": pa.array(rng.uniform(1, 100, n)),
        "distance": pa.array(rng.uniform(0.1, 50, n)),
        "city": pa.array(cities[rng.integers(0, partitions, n)]),
    })


def _updates(data: pa.Table, fraction: float, where: str, rng: np.random.Generator) -> pa.Table:
    n = int(data.num_rows * fraction)
    pool = np.arange(data.num_rows)
    if where == "one":
        pool = np.flatnonzero(pc.equal(data.column("city"), "city_3").to_numpy(zero_copy_only=False))
    picked = data.take(pa.array(np.sort(rng.choice(pool, size=min(n, len(pool)), replace=False))))
    return picked.set_column(1, "ts", pc.add(picked.column("ts"), 10**9)).set_column(
        4, "fare", pa.array(rng.uniform(1, 100, picked.num_rows))
    )


def _spark(partitions: int):
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from pyspark.sql import SparkSession

    spark = (
        SparkSession.builder.master("local[2]").appName("upsert-bench")
        .config("spark.ui.enabled", "false")
        .config("spark.driver.bindAddress", "127.0.0.1").config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.memory", "4g").config("spark.ui.showConsoleProgress", "false")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def _naive_upsert(spark, current: str, updates, target: str) -> None:
    rows = spark.read.parquet(current)
    merged = rows.join(updates.select("uuid"), "uuid", "left_anti").unionByName(updates)
    merged.write.mode("overwrite").option("compression", "gzip").partitionBy("city").parquet(target)


def _timed(fn) -> tuple[float, object]:
    t0 = time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--partitions", type=int, default=8)
    args = ap.parse_args()
    spark = _spark(args.partitions)
    work = Path(tempfile.mkdtemp(prefix="upsert-bench-"))
    rng = np.random.default_rng(7)
    try:
        data = _data(args.rows, args.partitions, seed=1)
        pq.write_table(data, work / "source.parquet")
        source = spark.read.parquet(str(work / "source.parquet"))
        table = HudiTable.create(work / "hudi", name="trips", record_key="uuid", partition_fields=["city"],
                                 ordering_field="ts")
        engine = SparkEngine(spark)
        setup_hudi, _ = _timed(lambda: table.write(source, "bulk_insert", engine=engine))
        setup_naive, _ = _timed(lambda: source.write.option("compression", "gzip").partitionBy("city")
                                .parquet(str(work / "naive-0")))
        # warm-up (untimed): the first Spark jobs of a session pay for JIT compilation and Python workers
        warm = pa.table({c: data.column(c).slice(0, 100) for c in data.column_names})
        pq.write_table(warm, work / "warm.parquet")
        table.write(spark.read.parquet(str(work / "warm.parquet")), "upsert", engine=engine)
        _naive_upsert(spark, str(work / "naive-0"), spark.read.parquet(str(work / "warm.parquet")), str(work / "warm"))
        results = []
        for i, (fraction, where) in enumerate(SCENARIOS, start=1):
            batch = _updates(data, fraction, where, rng)
            path = work / f"updates-{i}.parquet"
            pq.write_table(batch, path)
            updates = spark.read.parquet(str(path))
            hudi_s, commit = _timed(lambda u=updates: table.write(u, "upsert", engine=engine))
            local_s, local = _timed(lambda b=batch: table.write(b, "upsert", engine=LocalEngine()))
            naive_s, _ = _timed(lambda u=updates, i=i: _naive_upsert(
                spark, str(work / f"naive-{i - 1}"), u, str(work / f"naive-{i}")))
            shutil.rmtree(work / f"naive-{i - 1}")
            results.append({
                "scenario": f"{fraction:.0%} of keys, {'one partition' if where == 'one' else 'all partitions'}",
                "updated_rows": batch.num_rows,
                "hudi_ops_s": round(hudi_s, 2), "naive_s": round(naive_s, 2),
                "ratio_naive_over_hudi_ops": round(naive_s / hudi_s, 2),
                "hudi_ops_rows_per_s": round(batch.num_rows / hudi_s),
                "naive_rows_per_s": round(batch.num_rows / naive_s),
                "hudi_ops_split_ms": commit.durations_ms,
                "local_engine_s": round(local_s, 2), "ratio_naive_over_local_engine": round(naive_s / local_s, 2),
                "local_engine_split_ms": local.durations_ms,
                "files_rewritten": commit.files_written,
            })
        _check_same_rows(table, work / f"naive-{len(SCENARIOS)}")
    finally:
        spark.stop()
        shutil.rmtree(work, ignore_errors=True)
    print(f"{'scenario':36} {'rows':>8} {'spark s':>8} {'naive s':>8} {'naive/spark':>11} "
          f"{'index ms':>9} {'write ms':>9} {'commit ms':>9} {'files':>5} {'local s':>8} {'naive/local':>11}")
    for r in results:
        split = r["hudi_ops_split_ms"]
        print(f"{r['scenario']:36} {r['updated_rows']:>8} {r['hudi_ops_s']:>8} {r['naive_s']:>8} "
              f"{r['ratio_naive_over_hudi_ops']:>11} {split['index_lookup']:>9} {split['write']:>9} "
              f"{split['commit']:>9} {r['files_rewritten']:>5} {r['local_engine_s']:>8} "
              f"{r['ratio_naive_over_local_engine']:>11}")
    print(json.dumps({
        "bench": "upsert_spark", "rows": args.rows, "partitions": args.partitions, "cores": os.cpu_count(),
        "setup_s": {"hudi_ops_bulk_insert": round(setup_hudi, 2), "naive_write": round(setup_naive, 2)},
        "scenarios": results,
    }))


def _check_same_rows(table: HudiTable, naive: Path) -> None:
    cols = ["uuid", "ts", "fare", "city"]
    ours = table.read(columns=cols).sort_by("uuid")
    theirs = pq.read_table(naive, columns=cols[:3]).sort_by("uuid")
    if ours.select(cols[:3]) != theirs:
        raise SystemExit("hudi-ops and the naive rewrite disagree on the table's rows")


if __name__ == "__main__":
    main()
