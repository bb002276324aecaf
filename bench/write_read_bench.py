"""Write and read throughput of hudi-ops against baselines measured in the same run.

- insert: `table.bulk_insert` of N rows vs `pyarrow.parquet.write_table` of the same rows (same codec)
- upsert: updating 10% of the rows (index lookup + copy-on-write rewrite) vs rewriting every file with pyarrow
- read:   `table.read()` vs hudi-rs reading the same table vs `pyarrow.parquet.read_table` of its files
Prints one JSON line; ratios > 1 mean hudi-ops takes longer than the baseline.
"""

from __future__ import annotations

import argparse
import json
import shutil
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from hudi_ops import HudiTable


def _data(n: int, seed: int) -> pa.Table:
    rng = np.random.default_rng(seed)
    return pa.table({
        "uuid": pa.array([f"id-{i:09d}" for i in range(n)]),
        "ts": pa.array(rng.integers(0, 10**9, n)),
        "rider": pa.array([f"rider-{x}" for x in rng.integers(0, 10**5, n)]),
        "fare": pa.array(rng.uniform(1, 100, n)),
        "city": pa.array(np.array(["sf", "nyc", "chennai"])[rng.integers(0, 3, n)]),
    })


def _best(fn: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=300_000)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    data = _data(args.rows, 1)
    root = Path(tempfile.mkdtemp(prefix="hudi-ops-bench-"))
    try:
        def hudi_insert() -> None:
            shutil.rmtree(root / "t", ignore_errors=True)
            t = HudiTable.create(root / "t", name="bench", record_key="uuid", partition_fields=["city"],
                                 ordering_field="ts")
            t.bulk_insert(data)

        def arrow_insert() -> None:
            shutil.rmtree(root / "p", ignore_errors=True)
            (root / "p").mkdir()
            pq.write_table(data, root / "p" / "data.parquet", compression="gzip")

        insert_s = _best(hudi_insert, args.repeat)
        arrow_insert_s = _best(arrow_insert, args.repeat)

        table = HudiTable.open(root / "t")
        updates = data.take(pa.array(np.arange(0, args.rows, 10))).set_column(1, "ts", pa.array(
            np.full(args.rows // 10 + (args.rows % 10 > 0), 2 * 10**9)))
        # the baseline rewrites, with plain pyarrow, every file the upsert will rewrite
        before = [root / "t" / b.path for b in table.file_system_view().latest_base_files()]
        arrow_rewrite_s = _best(lambda: [pq.write_table(pq.read_table(f), root / "p" / f.name, compression="gzip")
                                         for f in before], 1)
        t0 = time.perf_counter()
        table.upsert(updates)
        upsert_s = time.perf_counter() - t0

        read_s = _best(table.read, args.repeat)
        try:
            import hudi

            rs_s = _best(lambda: hudi.HudiTable(str(root / "t")).read(), args.repeat)
        except ImportError:
            rs_s = None
        latest = [b.path for b in table.file_system_view().latest_base_files()]
        arrow_read_s = _best(lambda: pa.concat_tables([pq.read_table(root / "t" / p) for p in latest]), args.repeat)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    print(json.dumps({
        "bench": "write_read", "rows": args.rows,
        "bulk_insert_s": round(insert_s, 3), "pyarrow_write_s": round(arrow_insert_s, 3),
        "bulk_insert_vs_pyarrow": round(insert_s / arrow_insert_s, 2),
        "upsert_10pct_s": round(upsert_s, 3), "pyarrow_rewrite_s": round(arrow_rewrite_s, 3),
        "upsert_vs_pyarrow_rewrite": round(upsert_s / arrow_rewrite_s, 2),
        "read_s": round(read_s, 3), "hudi_rs_read_s": rs_s and round(rs_s, 3),
        "pyarrow_read_s": round(arrow_read_s, 3),
        "read_vs_hudi_rs": rs_s and round(read_s / rs_s, 2), "read_vs_pyarrow": round(read_s / arrow_read_s, 2),
    }))


if __name__ == "__main__":
    main()
