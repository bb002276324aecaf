"""Upserts through hudi-ops (Apache Hudi's writer) against the naive read-anti-join-rewrite, in one session.

1M rows (7 columns) over 8 partitions, loaded once into a Hudi table (hudi-ops `ingest`, BULK_INSERT)
and into a plain parquet dataset. Then the same update batches go to both: 1% of the keys of one
partition, and 10% of the keys of every partition. "naive" reads every row, left-anti-joins the
updated keys, unions the updates and rewrites everything; hudi-ops runs `ingest` (UPSERT) of the
batch's file, into the table with Hudi's defaults and into a copy without the metadata table (which
shows what the metadata table's upkeep costs per commit). The copies are compared row for row after
each batch. One JSON line: `naive_s / hudi_ops_s` per batch (above 1: hudi-ops is faster).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import shutil
import tempfile
import time
from pathlib import Path

ROWS, PARTITIONS = 1_000_000, 8


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=ROWS)
    args = ap.parse_args()
    from pyspark.sql import functions as F

    from hudi_ops.job_specs import IngestSpec
    from hudi_ops.spark.__main__ import main as job
    from hudi_ops.spark.session import session_builder

    spark = (session_builder("bench-upsert").config("spark.ui.enabled", "false")
             .config("spark.sql.shuffle.partitions", str(PARTITIONS)).config("spark.driver.memory", "4g")
             .getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    root = Path(tempfile.mkdtemp(prefix="hudi-ops-bench-"))
    try:
        def rows(frame, ts):
            return frame.select(
                F.format_string("key-%09d", "id").alias("key"), F.format_string("p%d", F.col("id") % PARTITIONS)
                .alias("part"), F.lit(ts).cast("long").alias("ts"), (F.col("id") * 0.5 + ts).alias("amount"),
                F.concat(F.lit("name-"), (F.col("id") % 1000).cast("string")).alias("name"),
                (F.col("id") % 97).alias("bucket"), F.lit(ts % 2 == 0).alias("flag"))

        def ingest(source: Path, op: str, table: str = "hudi", conf: dict[str, str] | None = None) -> float:
            spec = IngestSpec(base_path=str(root / table), table_name="bench", source_path=str(source),
                              record_key_field="key", partition_path_field="part", ordering_field="ts", operation=op,
                              hoodie_conf=conf or {})
            started = time.perf_counter()
            with contextlib.redirect_stdout(io.StringIO()):
                code = job(spec.to_argv(), spark=spark)
            assert code == 0, f"ingest exited {code}"
            return time.perf_counter() - started

        no_mdt = {"hoodie.metadata.enable": "false"}
        rows(spark.range(args.rows), 1).repartition(PARTITIONS).write.parquet(str(root / "landing" / "0"))
        load_s = ingest(root / "landing", "BULK_INSERT")
        ingest(root / "landing", "BULK_INSERT", "hudi-no-mdt", no_mdt)
        rows(spark.range(args.rows), 1).write.partitionBy("part").parquet(str(root / "naive-0"))
        batches = {
            "warm-up": F.col("id") % 1000 == 7,
            "1% of keys, one partition": (F.col("id") % PARTITIONS == 3) & (F.col("id") % 100 < PARTITIONS),
            "10% of keys, all partitions": (F.col("id") / PARTITIONS).cast("long") % 10 == 1,  # each id % 8
        }
        naive, results = root / "naive-0", []
        for n, (name, chosen) in enumerate(batches.items(), start=1):
            update = rows(spark.range(args.rows).where(chosen), n + 1)
            update.repartition(2).write.parquet(str(root / "landing" / str(n)))
            hudi_s = ingest(root / "landing", "UPSERT")
            no_mdt_s = ingest(root / "landing", "UPSERT", "hudi-no-mdt", no_mdt)

            started = time.perf_counter()
            batch = spark.read.parquet(str(root / "landing" / str(n)))
            kept = spark.read.parquet(str(naive)).join(batch.select("key"), "key", "left_anti")
            rewritten = root / f"naive-{n}"
            kept.unionByName(batch.select(*kept.columns)).write.partitionBy("part").parquet(str(rewritten))
            naive_s = time.perf_counter() - started
            naive = rewritten

            columns = ["key", "part", "ts", "amount", "name", "bucket", "flag"]
            hudi_rows = spark.read.format("hudi").load(str(root / "hudi")).select(*columns)
            plain_rows = spark.read.parquet(str(naive)).select(*columns)
            no_mdt_rows = spark.read.format("hudi").load(str(root / "hudi-no-mdt")).select(*columns)
            assert hudi_rows.count() == args.rows and hudi_rows.exceptAll(plain_rows).count() == 0
            assert no_mdt_rows.exceptAll(plain_rows).count() == 0
            if name != "warm-up":
                results.append({"upsert": name, "rows": update.count(), "hudi_ops_s": round(hudi_s, 2),
                                "hudi_ops_no_mdt_s": round(no_mdt_s, 2), "naive_s": round(naive_s, 2),
                                "naive_over_hudi_ops": round(naive_s / hudi_s, 2),
                                "naive_over_hudi_ops_no_mdt": round(naive_s / no_mdt_s, 2)})
        print(json.dumps({"bench": "upsert_hudi_vs_naive", "rows": args.rows, "partitions": PARTITIONS,
                          "load_s": round(load_s, 2), "spark": spark.version, "results": results}))
    finally:
        spark.stop()
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
