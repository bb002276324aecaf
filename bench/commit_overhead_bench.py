"""Commit overhead with concurrent writer processes: ZooKeeper lock vs file-system lock vs one writer.

Each writer process commits small upserts into its own partition (no conflicts), so what is
measured is the cost of coordination: commit latency (lock acquired -> completed instant written)
p50/p99, the wait for the lock, and commits per second over the run. The baseline, measured in the
same run, is a single writer with the in-process lock (no cross-process coordination). Starts a
real ZooKeeper server on 127.0.0.1 (Debian's package). Prints one JSON line.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from hudi_ops.demo.zookeeper_server import ZookeeperServer  # noqa: E402
from tests.integration.lock_options import FS_LOCK, zookeeper_lock  # noqa: E402

_WRITER = """
import json, sys, time, pyarrow as pa
from hudi_ops import HudiTable
path, part, n, options = sys.argv[1], sys.argv[2], int(sys.argv[3]), json.loads(sys.argv[4])
table = HudiTable.open(path)
out = []
began = time.time()
for i in range(n):
    r = table.upsert(pa.table({"id": [f"{part}-{i % 5}"], "v": [i], "p": [part]}), options=options)
    out.append([r.lock_held_ms, r.lock_wait_ms])
print(json.dumps({"samples": out, "began": began, "ended": time.time()}))
"""


def _run(root: Path, name: str, writers: int, commits: int, options: dict[str, str]) -> dict:
    from hudi_ops import HudiTable

    path = root / f"{name}-{writers}"
    HudiTable.create(path, name="bench", record_key="id", partition_fields=["p"])
    procs = [
        subprocess.Popen([sys.executable, "-c", _WRITER, str(path), f"w{w}", str(commits), json.dumps(options)],
                         stdout=subprocess.PIPE, text=True, cwd=ROOT)
        for w in range(writers)
    ]
    samples, spans = [], []
    for p in procs:
        out, _ = p.communicate(timeout=600)
        assert p.returncode == 0, f"{name} writer failed"
        report = json.loads(out)
        samples += report["samples"]
        spans.append((report["began"], report["ended"]))
    # from the first writer's first commit to the last writer's last one (process start-up excluded)
    wall = max(e for _, e in spans) - min(b for b, _ in spans)
    held = sorted(s[0] for s in samples)
    waits = [s[1] for s in samples]
    return {
        "lock": name, "writers": writers, "commits": len(held),
        "held_p50_ms": round(statistics.median(held), 2),
        "held_p99_ms": round(held[min(len(held) - 1, int(len(held) * 0.99))], 2),
        "wait_mean_ms": round(statistics.mean(waits), 2),
        "commits_per_s": round(len(held) / wall, 1),
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--commits", type=int, default=15, help="commits per writer process")
    args = ap.parse_args()
    root = Path(tempfile.mkdtemp(prefix="hudi-ops-bench-"))
    zk = ZookeeperServer(root / "zk")
    zk.start()
    try:
        results = [_run(root, "none", 1, args.commits, {})]
        for writers in (1, 2, 4, 8):
            results.append(_run(root, "filesystem", writers, args.commits, FS_LOCK))
            results.append(_run(root, "zookeeper", writers, args.commits, zookeeper_lock(zk.url)))
    finally:
        zk.cleanup()
        shutil.rmtree(root, ignore_errors=True)
    base = results[0]["held_p50_ms"]
    for r in results:
        r["held_p50_vs_single_writer"] = round(r["held_p50_ms"] / base, 2)
    print(json.dumps({"bench": "commit_overhead", "commits_per_writer": args.commits, "runs": results}))


if __name__ == "__main__":
    main()
