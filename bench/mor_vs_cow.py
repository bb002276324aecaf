"""MERGE_ON_READ against COPY_ON_WRITE: the same upserts into both, then snapshot reads of each.

400k rows over 4 partitions (8 columns, one a SHA-256 hex string per row and version, so that the
parquet files do not shrink to a few bytes a row: about 60) are inserted into a COPY_ON_WRITE and a
MERGE_ON_READ table through hudi-ops `ingest` (--op INSERT), then 4 upsert batches go into both,
each updating a different 10% of every partition's keys (every file group is touched: COW rewrites
its base files, MOR writes log files; `--narrow` drops the hash column). All runs share one
SparkSession (in-process `hudi_ops.spark.__main__.main`), so JVM start and class loading are out
of the figures (a small warm-up pair of tables loads the classes first), and the tables take turns
going first. Figures are the ingest job's own `durations_ms`. The MOR writer sets
`hoodie.compact.inline=false` (Hudi's datasource would otherwise compact a MOR table inline after 5
deltacommits), and the timeline is checked to hold no compaction before the reads.

Reads: Spark's Hudi reader (`spark.read.format("hudi").load(path)`, snapshot query), count and sum
of one column, median of 5 timed runs after an untimed one, the tables read in turns: the COW
table (the baseline) and the MOR table before compaction (base files merged with 4 log files per
file group), then both again after `compact --mode scheduleAndExecute` (with
`hoodie.compact.inline.max.delta.commits=1`) of the MOR table. The reads must agree on count and
sum. One JSON line: per-batch ingest times and COW/MOR (above 1: MOR writes faster), the MB
each commit wrote and each table's snapshot reads, read times and their ratios, the compaction's time.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

from in_process import run_job  # bench/, the script's folder

from hudi_ops.format.instant import Action
from hudi_ops.format.meta_client import MetaClient
from hudi_ops.job_specs import CompactSpec, IngestSpec

ROWS, PARTITIONS, BATCHES, READS = 400_000, 4, 4, 5
MOR_WRITER = {"hoodie.compact.inline": "false"}


def latest_mb(meta: MetaClient) -> float:
    """The size of what a snapshot reads: the newest slice of each file group."""
    return sum(g.slices[0].total_size for g in meta.fs_view().file_groups()) / 2**20


def written_mb(meta: MetaClient, instant: str) -> float:
    """The size of the files a commit wrote, as the table's listing has them."""
    files = [f for g in meta.fs_view().groups for s in g.slices for f in (s.base_file, *s.log_files)]
    return sum(f.size for f in files if f is not None and f.instant_time == instant) / 2**20


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=ROWS)
    ap.add_argument("--narrow", action="store_true", help="without the hash column (about 12 bytes a row in parquet)")
    args = ap.parse_args()
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)  # Spark's Python workers need hudi_ops
    from pyspark.sql import functions as F

    from hudi_ops.spark.session import require_hudi, session_builder

    spark = (session_builder("bench-mor-vs-cow").config("spark.sql.shuffle.partitions", str(PARTITIONS))
             .config("spark.driver.memory", "3g").getOrCreate())
    require_hudi(spark)
    spark.sparkContext.setLogLevel("ERROR")
    root = Path(tempfile.mkdtemp(prefix="hudi-ops-bench-"))
    try:
        def rows(frame, ts):
            payload = [] if args.narrow else [  # a value per row and version that compresses like real data
                F.sha2(F.concat_ws("/", F.col("id").cast("string"), F.lit(str(ts))), 256).alias("payload")]
            return frame.select(
                F.format_string("key-%09d", "id").alias("key"), F.format_string("p%d", F.col("id") % PARTITIONS)
                .alias("part"), F.lit(ts).cast("long").alias("ts"), (F.col("id") * 0.5 + ts).alias("amount"),
                F.concat(F.lit("name-"), (F.col("id") % 1000).cast("string")).alias("name"),
                (F.col("id") % 97).alias("bucket"), F.lit(ts % 2 == 0).alias("flag"), *payload)

        def ingest(table: str, landing: Path, op: str = "UPSERT") -> dict:
            kind = "MERGE_ON_READ" if table.startswith("mor") else "COPY_ON_WRITE"
            conf = MOR_WRITER if kind == "MERGE_ON_READ" else {}
            return run_job(spark, IngestSpec(
                base_path=str(root / table), table_name=table, source_path=str(landing), record_key_field="key",
                partition_path_field="part", ordering_field="ts", table_type=kind, operation=op,
                hoodie_conf=conf).to_argv())

        def read(table: str) -> tuple[float, tuple[int, float]]:
            started = time.perf_counter()
            got = spark.read.format("hudi").load(str(root / table)).agg(F.count("*"), F.sum("amount")).first()
            return time.perf_counter() - started, (got[0], got[1])

        def reads(*tables: str) -> list[tuple[float, tuple[int, float]]]:
            """The tables read in turns (a load from the machine's other work falls on each alike): the
            median time of each and its answer."""
            answers = [read(t)[1] for t in tables]  # untimed
            timed = [[read(t) for t in tables] for _ in range(READS)]
            for i, answer in enumerate(answers):
                assert {r[i][1] for r in timed} == {answer}, timed
            return [(statistics.median(r[i][0] for r in timed), a) for i, a in enumerate(answers)]

        # warm-up: both table types' write and read paths, on small tables, not measured
        for n in range(2):
            rows(spark.range(20_000).where(f"id div {PARTITIONS} % 10 = 0" if n else "true"), n + 1) \
                .write.parquet(str(root / "warm-landing" / str(n)))
            for table in ("cow-warm", "mor-warm"):
                ingest(table, root / "warm-landing", "INSERT" if n == 0 else "UPSERT")
        for table in ("cow-warm", "mor-warm"):
            spark.read.format("hudi").load(str(root / table)).agg(F.count("*"), F.sum("amount")).first()

        landing = root / "landing"
        rows(spark.range(args.rows), 1).repartition(PARTITIONS).write.parquet(str(landing / "0"))
        load = {t: ingest(t, landing, "INSERT") for t in ("mor", "cow")}
        batches = []
        for n in range(1, BATCHES + 1):
            # 10% of each partition's keys (a residue of id alone would pick some partitions only)
            rows(spark.range(args.rows).where(f"id div {PARTITIONS} % 10 = {n}"), n + 1).repartition(2) \
                .write.parquet(str(landing / str(n)))
            order = ("cow", "mor") if n % 2 else ("mor", "cow")  # neither always goes first
            done = {t: ingest(t, landing) for t in order}
            assert all(d["updates"] == args.rows // 10 for d in done.values()), done
            cow_s, mor_s = (done[t]["durations_ms"]["total"] / 1000 for t in ("cow", "mor"))
            batches.append({"batch": n, "rows": done["cow"]["updates"], "cow_s": round(cow_s, 2),
                            "mor_s": round(mor_s, 2), "cow_over_mor": round(cow_s / mor_s, 2),
                            **{f"{t}_mb_written": round(written_mb(MetaClient.open(root / t), done[t]["instant"]), 1)
                               for t in ("cow", "mor")}})

        timeline = MetaClient.open(root / "mor").timeline()
        compactions = [i for i in timeline if i.action in (Action.COMPACTION, Action.COMMIT)]
        deltacommits = [i for i in timeline.completed if i.action == Action.DELTA_COMMIT]
        assert not compactions and len(deltacommits) == BATCHES + 1, (compactions, len(deltacommits))
        mor_before_mb = latest_mb(MetaClient.open(root / "mor"))

        (cow_read_s, cow_answer), (mor_read_s, mor_answer) = reads("cow", "mor")
        compact = CompactSpec(base_path=str(root / "mor"), mode="scheduleAndExecute",
                              hoodie_conf={"hoodie.compact.inline.max.delta.commits": "1"})
        compacted = run_job(spark, compact.to_argv())
        assert compacted["outcome"] == "completed", compacted
        (cow_again_s, _), (compacted_read_s, compacted_answer) = reads("cow", "mor")
        assert cow_answer == mor_answer == compacted_answer and cow_answer[0] == args.rows, \
            (cow_answer, mor_answer, compacted_answer)

        cow_mb, mor_mb = (latest_mb(MetaClient.open(root / t)) for t in ("cow", "mor"))
        cow_total = sum(b["cow_s"] for b in batches)
        mor_total = sum(b["mor_s"] for b in batches)
        print(json.dumps({
            "bench": "mor_vs_cow", "rows": args.rows, "partitions": PARTITIONS, "spark": spark.version,
            "insert_s": {t: round(load[t]["durations_ms"]["total"] / 1000, 2) for t in ("cow", "mor")},
            "upserts": batches,
            "upserts_cow_s": round(cow_total, 2), "upserts_mor_s": round(mor_total, 2),
            "upserts_cow_over_mor": round(cow_total / mor_total, 2),
            "upserts_cow_over_mor_median": round(statistics.median(b["cow_over_mor"] for b in batches), 2),
            "table_mb": {"cow": round(cow_mb, 1), "mor_before_compaction": round(mor_before_mb, 1),
                         "mor_after_compaction": round(mor_mb, 1)},
            "read_cow_s": round(cow_read_s, 2), "read_mor_before_compaction_s": round(mor_read_s, 2),
            "read_mor_after_compaction_s": round(compacted_read_s, 2), "read_cow_again_s": round(cow_again_s, 2),
            "read_mor_before_over_cow": round(mor_read_s / cow_read_s, 2),
            "read_mor_before_over_after_compaction": round(mor_read_s / compacted_read_s, 2),
            "read_mor_after_compaction_over_cow_again": round(compacted_read_s / cow_again_s, 2),
            "compaction_s": round(compacted["durations_ms"]["total"] / 1000, 2),
            "compaction_file_groups": compacted["file_groups"],
        }))
    finally:
        spark.stop()
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
