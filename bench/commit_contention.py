"""Commits under contention: 1, 2 and 4 Hudi writers (spark-submit processes) on disjoint partitions of
one table, under one ZooKeeper lock (Hudi's ZookeeperBasedLockProvider, OCC).

A watcher lists the lock's znode every 2 ms and times each holder's tenure: Hudi takes the lock to
start an instant, to set the table up and to commit, so a commit makes three holds. One JSON line:
per writer count, commits per minute (from the first commit's start to the last one's end, JVM
start-ups excluded) and the lock hold time p50/p99, all against the single writer of the same run.
"""

from __future__ import annotations

import json
import shutil
import statistics
import subprocess
import tempfile
import threading
import time
from pathlib import Path

import common  # bench/, the script's folder
from kazoo.client import KazooClient

from hudi_ops.locks.zookeeper import lock_node_sort_key
from hudi_ops.spark.launch import spark_submit_command
from local_platform.zookeeper_server import ZookeeperServer

HERE = Path(__file__).parent
COMMITS = 6
CONF = {**common.CONF, "spark.driver.memory": "768m"}


class HoldWatcher(threading.Thread):
    """Times how long each lock node stays first in line (holds the lock)."""

    def __init__(self, url: str, lock_path: str) -> None:
        super().__init__(daemon=True)
        self.client = KazooClient(hosts=url)
        self.client.start()
        self.client.ensure_path(lock_path)
        self.lock_path, self.holds, self.stop = lock_path, [], threading.Event()

    def run(self) -> None:
        head, since = None, 0.0
        while not self.stop.is_set():
            children = sorted(self.client.get_children(self.lock_path), key=lock_node_sort_key)
            now = time.perf_counter()
            first = children[0] if children else None
            if first != head:
                if head is not None:
                    self.holds.append(now - since)
                head, since = first, now
            time.sleep(0.002)
        self.client.stop()


def run(writers: int, root: Path, zookeeper: ZookeeperServer) -> dict[str, float]:
    table = root / f"t{writers}"
    lock = common.lock_options(zookeeper, table.name)
    conf = [f"{k}={v}" for k, v in lock.items()]  # the writers' options, as contention_writer.py takes them

    def writer(source: Path, partition: str, commits: int) -> list[str]:
        source.mkdir()
        return spark_submit_command([str(table), str(source), "COPY_ON_WRITE", partition, "own:2000", str(commits),
                                     *conf], master="local[1]",
                                    conf=CONF, spark_submit=common.SPARK_SUBMIT,
                                    application=str(HERE / "contention_writer.py"))

    # the table exists before the race: its first commit creates it, which is not a contended write
    subprocess.run(writer(root / f"seed{writers}", "seed", 1), check=True, capture_output=True)
    watcher = HoldWatcher(zookeeper.url, f"{common.LOCK_BASE_PATH}/{table.name}")
    watcher.start()
    procs = []
    for w in range(writers):
        procs.append(subprocess.Popen(writer(root / f"s{writers}-{w}", f"p{w}", COMMITS), stdout=subprocess.PIPE,
                                      stderr=subprocess.DEVNULL, text=True))
    reports = [json.loads(p.communicate()[0].strip().splitlines()[-1]) for p in procs]
    watcher.stop.set()
    watcher.join()
    ends = [c["at"] for r in reports for c in r["commits"]]
    assert all([t["code"] for t in c["tries"]] == [0] for r in reports for c in r["commits"]), reports
    firsts = [r["commits"][0]["at"] for r in reports]
    # from the earliest first commit: the JVMs start at different speeds, their commits then contend
    span = max(ends) - min(firsts)
    commits = len(ends) - len(reports)
    return {"writers": writers, "commits": len(ends), "commits_per_min": round(commits / span * 60, 1),
            "lock_holds": len(watcher.holds), "hold_p50_ms": round(common.percentile(watcher.holds, 0.5) * 1000, 1),
            "hold_p99_ms": round(common.percentile(watcher.holds, 0.99) * 1000, 1),
            "hold_mean_ms": round(statistics.mean(watcher.holds) * 1000, 1)}


def main() -> None:
    root = Path(tempfile.mkdtemp(prefix="hudi-ops-bench-"))
    zookeeper = ZookeeperServer(root / "zk")
    try:
        zookeeper.start()
        results = [run(n, root, zookeeper) for n in (1, 2, 4)]
        base = results[0]
        for r in results:
            r["commits_per_min_vs_1"] = round(r["commits_per_min"] / base["commits_per_min"], 2)
            r["hold_p50_vs_1"] = round(r["hold_p50_ms"] / base["hold_p50_ms"], 2)
        print(json.dumps({"bench": "commit_contention", "commits_per_writer": COMMITS, "results": results}))
    finally:
        zookeeper.stop()
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
