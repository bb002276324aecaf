"""Where Hudi's upsert wins: hudi-ops `ingest` (Apache Hudi's writer) against the naive
read-anti-join-rewrite, at several table sizes, with the indexes a user would choose; one session.

Per size (`--rows`, default 1M, 4M and 16M rows of 7 columns over 8 partitions): the rows are loaded
once into a Hudi table (hudi-ops `ingest`, BULK_INSERT), copied once per index, and written as a plain
parquet dataset. Then the same update batches go to all of them: a warm-up (which also builds the
record index), 1% of the keys of one partition, and 10% of the keys of every partition. "naive"
reads every row, left-anti-joins the updated keys, unions the updates and rewrites everything;
hudi-ops runs `ingest` (UPSERT) of the batch's file with `hoodie.index.type` SIMPLE, BLOOM or
RECORD_INDEX (the metadata table's record index). After each batch every copy must hold exactly the
plain dataset's rows (count and a checksum of every column). One JSON line: per size and batch, each
one's seconds and `naive_s / index_s` (above 1: Hudi's upsert is faster), and per batch the smallest
size at which the best index beats the rewrite.
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

PARTITIONS = 8
SIZES = (1_000_000, 4_000_000, 16_000_000)
INDEXES = {
    "SIMPLE": {"hoodie.index.type": "SIMPLE"},
    "BLOOM": {"hoodie.index.type": "BLOOM"},
    "RECORD_INDEX": {"hoodie.index.type": "RECORD_INDEX", "hoodie.metadata.record.index.enable": "true"},
}
COLUMNS = ["key", "part", "ts", "amount", "name", "bucket", "flag"]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", default=",".join(map(str, SIZES)), help="comma-separated table sizes")
    ap.add_argument("--indexes", default=",".join(INDEXES), help=f"comma-separated, of {', '.join(INDEXES)}")
    args = ap.parse_args()
    from pyspark.sql import functions as F

    from hudi_ops.job_specs import IngestSpec
    from hudi_ops.spark.__main__ import main as job
    from hudi_ops.spark.session import session_builder

    spark = (session_builder("bench-upsert").config("spark.ui.enabled", "false")
             .config("spark.sql.shuffle.partitions", str(PARTITIONS)).config("spark.driver.memory", "6g")
             .getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    indexes = args.indexes.split(",")

    def rows(frame, ts):
        return frame.select(
            F.format_string("key-%09d", "id").alias("key"), F.format_string("p%d", F.col("id") % PARTITIONS)
            .alias("part"), F.lit(ts).cast("long").alias("ts"), (F.col("id") * 0.5 + ts).alias("amount"),
            F.concat(F.lit("name-"), (F.col("id") % 1000).cast("string")).alias("name"),
            (F.col("id") % 97).alias("bucket"), F.lit(ts % 2 == 0).alias("flag"))

    def fingerprint(frame) -> tuple[int, int]:
        got = frame.select(F.count(F.lit(1)), F.sum(F.crc32(F.concat_ws("|", *COLUMNS)))).first()
        return got[0], got[1]

    def one_size(root: Path, size: int) -> dict:
        def ingest(source: Path, op: str, table: Path, conf: dict[str, str]) -> float:
            spec = IngestSpec(base_path=str(table), table_name="bench", source_path=str(source),
                              record_key_field="key", partition_path_field="part", ordering_field="ts",
                              operation=op, hoodie_conf=conf)
            started = time.perf_counter()
            with contextlib.redirect_stdout(io.StringIO()):
                code = job(spec.to_argv(), spark=spark)
            assert code == 0, f"ingest into {table.name} exited {code}"
            return time.perf_counter() - started

        rows(spark.range(size), 1).repartition(PARTITIONS).write.parquet(str(root / "landing" / "0"))
        load_s = ingest(root / "landing", "BULK_INSERT", root / "loaded", {})
        tables = {}
        for index in indexes:  # the same files for each index: copies of one load
            shutil.copytree(root / "loaded", root / index)
            tables[index] = root / index
        shutil.rmtree(root / "loaded")
        rows(spark.range(size), 1).write.partitionBy("part").parquet(str(root / "naive-0"))
        batches = {
            "warm-up": F.col("id") % 1000 == 7,
            "1% of keys, one partition": (F.col("id") % PARTITIONS == 3) & (F.col("id") % 100 < PARTITIONS),
            "10% of keys, all partitions": (F.col("id") / PARTITIONS).cast("long") % 10 == 1,  # each id % 8
        }
        naive, results = root / "naive-0", []
        for n, (name, chosen) in enumerate(batches.items(), start=1):
            update = rows(spark.range(size).where(chosen), n + 1)
            update.repartition(2).write.parquet(str(root / "landing" / str(n)))
            # every table's ingest reads the one landing folder: each has its own checkpoint
            hudi_s = {index: ingest(root / "landing", "UPSERT", table, INDEXES[index])
                      for index, table in tables.items()}

            started = time.perf_counter()
            batch = spark.read.parquet(str(root / "landing" / str(n)))
            kept = spark.read.parquet(str(naive)).join(batch.select("key"), "key", "left_anti")
            rewritten = root / f"naive-{n}"
            kept.unionByName(batch.select(*kept.columns)).write.partitionBy("part").parquet(str(rewritten))
            naive_s = time.perf_counter() - started
            shutil.rmtree(naive)
            naive = rewritten

            expected = fingerprint(spark.read.parquet(str(naive)))
            assert expected[0] == size
            for index, table in tables.items():
                got = fingerprint(spark.read.format("hudi").load(str(table)))
                assert got == expected, f"{index} at {size} rows after {name}: {got} != {expected}"
            if name != "warm-up":
                results.append({"upsert": name, "rows": update.count(), "naive_s": round(naive_s, 2),
                                **{f"{i}_s": round(s, 2) for i, s in hudi_s.items()},
                                **{f"naive_over_{i}": round(naive_s / s, 2) for i, s in hudi_s.items()}})
        return {"rows": size, "load_s": round(load_s, 2), "results": results}

    curve = []
    try:
        for size in (int(s) for s in args.rows.split(",")):
            root = Path(tempfile.mkdtemp(prefix="hudi-ops-bench-"))
            try:
                curve.append(one_size(root, size))
            finally:
                shutil.rmtree(root, ignore_errors=True)
        crossover = {}
        for batch in (r["upsert"] for r in curve[0]["results"]):
            wins = [c["rows"] for c in curve for r in c["results"]
                    if r["upsert"] == batch and max(r[f"naive_over_{i}"] for i in indexes) > 1]
            crossover[batch] = min(wins) if wins else None
        print(json.dumps({"bench": "upsert_hudi_vs_naive", "partitions": PARTITIONS, "spark": spark.version,
                          "curve": curve, "best_index_beats_naive_from_rows": crossover}))
    finally:
        spark.stop()


if __name__ == "__main__":
    main()
