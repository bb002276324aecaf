"""Cleaning as history grows: Hudi's clean planning, a real clean, and the control plane's check.

A small COPY_ON_WRITE table (400 rows, 4 partitions, one file group each) takes tiny commits: each
updates 5 rows of one partition, so each rewrites one file group into a new file slice. Writers set
`hoodie.clean.automatic=false`, so slices pile up and with `hoodie.cleaner.commits.retained=3` there
is always something to clean, and `hoodie.archive.automatic=false`, so every commit stays on the
active timeline: the history the cleaner and the check see grows with the count (archival, on by
default, keeps a table's active timeline within about `hoodie.keep.max.commits`=30 commits once its
cleans run). The metadata table stays on (Hudi's default), as on real tables.

At 10, 100 and 500 commits, with one shared SparkSession (local[1]; JVM start excluded):
- `clean --dry-run` (Hudi's CleanPlanner; what a clean would remove, nothing written), median of 3:
  the first clean of a table that was never cleaned, which plans from every partition;
- `hudi_ops.read.service_work.clean_work` (the Python check, file listing and timeline), median of 5;
- on a copy of the table: a real `clean`, then 4 more commits, and the dry-run, the check and a real
  clean again: an incremental clean, which Hudi plans from the last clean's earliest commit to retain.
The commits are written straight through Hudi's datasource (the write `ingest` makes, without its
per-commit source listing). They cost about 2 s each on a shared 2-core machine, so the commits are
written under a time budget (`--budget-s`): when 500 does not fit, the last point is the largest
count that does, stated in the output (`commits_measured`). One JSON line: the figures at each
count, the ratios last/first, and the mean time of the commits written towards each point.
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

from hudi_ops.format.meta_client import MetaClient
from hudi_ops.read.service_work import clean_work

COUNTS, PARTITIONS, ROWS, PER_COMMIT, RETAINED, AFTER_CLEAN = (10, 100, 500), 4, 400, 5, 3, 4
#: seconds of commit writing allowed by default: with the measurements, about 10 minutes in all
BUDGET_S = 420.0
WRITER = {
    "hoodie.table.name": "clean_bench", "hoodie.datasource.write.table.type": "COPY_ON_WRITE",
    "hoodie.datasource.write.recordkey.field": "key", "hoodie.datasource.write.partitionpath.field": "part",
    "hoodie.datasource.write.precombine.field": "ts",
    "hoodie.clean.automatic": "false", "hoodie.archive.automatic": "false",
    "hoodie.cleaner.commits.retained": str(RETAINED),
    "hoodie.upsert.shuffle.parallelism": "1", "hoodie.insert.shuffle.parallelism": "1",
}
#: the clean job's options, and the check's
CLEANER = {"hoodie.cleaner.commits.retained": str(RETAINED), "hoodie.archive.automatic": "false"}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--commits", default=",".join(map(str, COUNTS)), help="the counts measured, ascending")
    ap.add_argument("--budget-s", type=float, default=BUDGET_S, help="seconds of commit writing; 0: no limit")
    args = ap.parse_args()
    counts = [int(c) for c in args.commits.split(",")]
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from hudi_ops.job_specs import CleanSpec
    from hudi_ops.spark.session import require_hudi, session_builder, session_options

    spark = (session_builder("bench-clean-planning", master="local[1]").config("spark.sql.shuffle.partitions", "1")
             .config("spark.default.parallelism", "1").getOrCreate())
    require_hudi(spark)
    spark.sparkContext.setLogLevel("ERROR")
    writer = session_options(spark, WRITER)
    root = Path(tempfile.mkdtemp(prefix="hudi-ops-bench-"))

    def write(table: Path, n: int, keys: list[int], op: str = "upsert") -> float:
        frame = spark.createDataFrame([(f"k{i:05d}", f"p{i % PARTITIONS}", n, float(n)) for i in keys],
                                      "key string, part string, ts long, v double")
        started = time.perf_counter()
        frame.write.format("hudi").options(**writer).option("hoodie.datasource.write.operation", op) \
            .mode("append").save(str(table))
        return time.perf_counter() - started

    def tiny(table: Path, n: int) -> float:
        """Commit n updates PER_COMMIT rows of partition n % PARTITIONS: one file group."""
        return write(table, n, [n % PARTITIONS + PARTITIONS * j for j in range(PER_COMMIT)])

    def dry_run(table: Path) -> tuple[float, int]:
        runs = [run_job(spark, CleanSpec(base_path=str(table), dry_run=True, hoodie_conf=CLEANER).to_argv())
                for _ in range(3)]
        assert len({r["files"] for r in runs}) == 1, runs
        return statistics.median(r["durations_ms"]["total"] for r in runs) / 1000, runs[0]["files"]

    def check(table: Path) -> tuple[float, bool]:
        times, answers = [], set()
        for _ in range(5):
            started = time.perf_counter()
            answers.add(clean_work(MetaClient.open(table), CLEANER).due)
            times.append(time.perf_counter() - started)
        assert len(answers) == 1, answers
        return statistics.median(times), answers.pop()

    def clean(table: Path) -> tuple[float, int]:
        done = run_job(spark, CleanSpec(base_path=str(table), mode="scheduleAndExecute", hoodie_conf=CLEANER).to_argv())
        assert done["outcome"] == "completed", done
        return done["durations_ms"]["total"] / 1000, done["files"]

    try:
        table = root / "t"
        write(table, 0, list(range(ROWS)), "insert")
        made = 1  # commits on the main table
        points, commit_times, budget_note = [], [], None
        for target in counts:
            times: list[float] = []
            while made < target:
                times.append(tiny(table, made))
                commit_times.append(times[-1])
                made += 1
                if args.budget_s and sum(commit_times) > args.budget_s and made < counts[-1]:
                    budget_note = (f"{counts[-1]} commits did not fit the {args.budget_s:.0f} s budget of commit "
                                   f"writing ({statistics.mean(commit_times):.2f} s a commit): the last point is "
                                   f"{made}")
                    break
            if not points:  # warm-up, not measured: the planner's, the cleaner's and the check's code paths
                dry_run(table)
                check(table)
                shutil.copytree(table, root / "warm")
                clean(root / "warm")
                shutil.rmtree(root / "warm")
            first_plan_s, first_plan_files = dry_run(table)
            check_s, check_due = check(table)
            assert check_due or first_plan_files == 0
            copy = root / f"copy-{made}"
            shutil.copytree(table, copy)
            first_clean_s, first_clean_files = clean(copy)
            for n in range(made, made + AFTER_CLEAN):
                tiny(copy, n)
            incr_plan_s, incr_plan_files = dry_run(copy)
            incr_check_s, incr_due = check(copy)
            assert incr_due or incr_plan_files == 0
            incr_clean_s, incr_clean_files = clean(copy)
            shutil.rmtree(copy)
            points.append({
                "commits": made,
                "commit_mean_s": round(statistics.mean(times), 2) if times else None,
                "timeline_instants": len(MetaClient.open(table).timeline()),
                "first_plan_s": round(first_plan_s, 3), "first_plan_files": first_plan_files,
                "check_ms": round(check_s * 1000, 1), "check_due": check_due,
                "first_clean_s": round(first_clean_s, 3), "first_clean_files": first_clean_files,
                "incremental_plan_s": round(incr_plan_s, 3), "incremental_plan_files": incr_plan_files,
                "incremental_check_ms": round(incr_check_s * 1000, 1), "incremental_check_due": incr_due,
                "incremental_clean_s": round(incr_clean_s, 3), "incremental_clean_files": incr_clean_files,
            })
            if budget_note:
                break

        first, last = points[0], points[-1]
        print(json.dumps({
            "bench": "clean_planning", "commits_asked": counts, "commits_measured": [p["commits"] for p in points],
            "budget_note": budget_note, "commits_retained": RETAINED, "partitions": PARTITIONS,
            "spark": spark.version, "points": points,
            "last_over_first": {"commits": f"{last['commits']}/{first['commits']}", **{
                key: round(last[key] / first[key], 2)
                for key in ("first_plan_s", "first_plan_files", "check_ms", "first_clean_s", "incremental_plan_s",
                            "incremental_check_ms", "incremental_clean_s")}},
        }))
    finally:
        spark.stop()
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
