"""How the cost of a small upsert grows with the timeline (hudi-ops does not archive yet).

Writes N small upserts into one table and compares the mean time of the last ten with the first
ten (the baseline, measured in the same run). Prints one JSON line; a ratio near 1 means a longer
timeline costs little.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import tempfile
import time
from pathlib import Path

import pyarrow as pa

from hudi_ops import HudiTable


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--commits", type=int, default=150)
    args = ap.parse_args()
    root = Path(tempfile.mkdtemp(prefix="hudi-ops-bench-"))
    try:
        table = HudiTable.create(root / "t", name="growth", record_key="id", partition_fields=["p"],
                                 ordering_field="ts")
        times = []
        for i in range(args.commits):
            batch = pa.table({"id": [i % 50, 1000 + i], "ts": [i, i], "p": [f"p{i % 5}", f"p{i % 5}"]})
            t0 = time.perf_counter()
            table.upsert(batch)
            times.append(time.perf_counter() - t0)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    first, last = statistics.mean(times[:10]), statistics.mean(times[-10:])
    print(json.dumps({
        "bench": "timeline_growth", "commits": args.commits,
        "first10_mean_s": round(first, 4), "last10_mean_s": round(last, 4), "last_vs_first": round(last / first, 2),
    }))


if __name__ == "__main__":
    main()
