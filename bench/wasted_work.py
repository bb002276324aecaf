"""Work thrown away under contention: 1, 2 and 4 writers (spark-submit processes under one ZooKeeper
lock) upserting the same 2,000 keys of one partition, 4 commits each, a refused try retried at once.

Per concurrency setting, on a new table each time:
- `occ`: hudi-ops' default table (COPY_ON_WRITE, Hudi's default index), optimistic concurrency: a
  writer finds its conflict at its commit, after all its work;
- `occ_early`: the same with Hudi's early conflict detection
  (`hoodie.write.concurrency.early.conflict.detection.enable`), which checks the other writers' markers
  while it writes;
- `occ_mor_bucket`: a MERGE_ON_READ table with a simple bucket index, still optimistic: the layout
  non-blocking concurrency needs, as its baseline;
- `nbcc`: that table with non-blocking concurrency control (`NON_BLOCKING_CONCURRENCY_CONTROL`):
  writers append log files to the same file groups, and readers merge them by the ordering field.

One JSON line: per setting and writer count, commits per minute (from the first try's start to the
last commit, JVM start-ups excluded), conflicts (tries refused by a write conflict; of them found early), the seconds a
conflicting try ran (thrown away) per conflict, and the share of all writing time thrown away. Every
table must read, with hudi-rs, each key once with the greatest ordering value written (a
MERGE_ON_READ table after a compaction: hudi-rs reads no file group that has only log files).
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import tempfile
from pathlib import Path

import common  # bench/, the script's folder

from hudi_ops.errors import is_write_conflict
from hudi_ops.job_specs import CompactSpec
from hudi_ops.spark.launch import spark_submit_command
from local_platform.zookeeper_server import ZookeeperServer

HERE = Path(__file__).parent
COMMITS, KEYS = 4, 2_000
CONF = {**common.CONF, "spark.driver.memory": "768m"}
BUCKET = {"hoodie.index.type": "BUCKET", "hoodie.index.bucket.engine": "SIMPLE", "hoodie.bucket.index.num.buckets": "2"}
#: setting -> (table type, the table's options)
SETTINGS = {
    "occ": ("COPY_ON_WRITE", {}),
    "occ_early": ("COPY_ON_WRITE", {"hoodie.write.concurrency.early.conflict.detection.enable": "true"}),
    "occ_mor_bucket": ("MERGE_ON_READ", BUCKET),
    "nbcc": ("MERGE_ON_READ", {**BUCKET, "hoodie.write.concurrency.mode": "NON_BLOCKING_CONCURRENCY_CONTROL"}),
}


def run(setting: str, writers: int, root: Path, zookeeper: ZookeeperServer) -> dict[str, object]:
    table = root / f"{setting}-{writers}"
    table_type, options = SETTINGS[setting]
    conf = [f"{k}={v}" for k, v in common.lock_options(zookeeper, table.name, options).items()]

    def writer(name: str, commits: int) -> list[str]:
        (root / name).mkdir()
        return spark_submit_command([str(table), str(root / name), table_type, "hot", f"shared:{KEYS}",
                                     str(commits), *conf], master="local[1]", conf=CONF,
                                    spark_submit=common.SPARK_SUBMIT, application=str(HERE / "contention_writer.py"))

    seed = subprocess.run(writer(f"{table.name}-seed", 1), capture_output=True, text=True, check=False)
    assert seed.returncode == 0, seed.stdout[-2000:] + seed.stderr[-3000:]
    procs = [subprocess.Popen(writer(f"{table.name}-w{w}", COMMITS), stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL, text=True) for w in range(writers)]
    reports = [json.loads(p.communicate()[0].strip().splitlines()[-1]) for p in procs]
    commits = [c for r in reports for c in r["commits"]]
    tries = [t for c in commits for t in c["tries"]]
    assert all(c["tries"][-1]["code"] == 0 for c in commits), reports
    conflicts = [t["s"] for t in tries if t["code"] == 3 and is_write_conflict(t["error"] or "")]
    span = max(c["at"] for c in commits) - min(c["start"] for c in commits)
    if table_type == "MERGE_ON_READ":
        _compact(table, common.lock_options(zookeeper, table.name, options))
    _check_table(table, max(c["ts"] for c in commits))
    return {"setting": setting, "writers": writers, "commits": len(commits), "tries": len(tries),
            "conflicts": len(conflicts), "found_early": sum(t["error"] == "EarlyConflictError" for t in tries),
            "commits_per_min": round(len(commits) / span * 60, 1),
            "wasted_s_per_conflict": round(statistics.mean(conflicts), 2) if conflicts else 0.0,
            "wasted_share": round(sum(conflicts) / sum(t["s"] for t in tries), 3)}


def _compact(table: Path, options: dict[str, str]) -> None:
    """hudi-rs (0.5.0) reads no file slice of a file group that has only log files, which is all that
    non-blocking writers write until a compaction: a MERGE_ON_READ table's logs are compacted (hudi-ops'
    `compact` job) before its check."""
    args = CompactSpec(base_path=str(table), mode="scheduleAndExecute",
                       hoodie_conf={**options, "hoodie.compact.inline.max.delta.commits": "1"}).to_argv()
    done = subprocess.run(spark_submit_command(args, master="local[1]", conf=CONF, spark_submit=common.SPARK_SUBMIT),
                          capture_output=True, text=True, check=False)
    # nothing to plan when the writers' inline compaction left no log file
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]


def _check_table(table: Path, newest: int) -> None:
    import hudi
    import pyarrow as pa

    rows = pa.Table.from_batches(hudi.HudiTable(str(table)).read()).select(["key", "ts"]).to_pylist()
    keys = [r["key"] for r in rows]
    assert len(keys) == len(set(keys)) == KEYS, f"{table.name}: {len(keys)} rows, {len(set(keys))} keys"
    assert {r["ts"] for r in rows} == {newest}, f"{table.name}: not every key has the newest write"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--settings", default=",".join(SETTINGS), help=f"comma-separated, of {', '.join(SETTINGS)}")
    ap.add_argument("--writers", default="1,2,4", help="comma-separated writer counts (1 is the baseline)")
    args = ap.parse_args()
    root = Path(tempfile.mkdtemp(prefix="hudi-ops-bench-"))
    zookeeper = ZookeeperServer(root / "zk")
    try:
        zookeeper.start()
        results = [run(s, int(n), root, zookeeper) for s in args.settings.split(",") for n in args.writers.split(",")]
        base = {r["setting"]: r for r in results if r["writers"] == 1}
        for r in results:
            if r["setting"] in base:
                r["commits_per_min_vs_1"] = round(r["commits_per_min"] / base[r["setting"]]["commits_per_min"], 2)
        print(json.dumps({"bench": "wasted_work", "commits_per_writer": COMMITS, "keys": KEYS, "results": results}))
    except BaseException:
        print(f"wasted_work: the tables are kept in {root}")
        zookeeper.stop()
        raise
    zookeeper.stop()
    shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
