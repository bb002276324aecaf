"""What hudi-ops adds around Hudi's writer, measured in one run.

1. The same upsert (20,000 updated rows of a 200,000-row table, 8 partitions), as a hudi-ops `ingest`
   job and as a bare PySpark script (bench/bare_hudi_upsert.py), each a whole spark-submit, taking
   turns on two identical tables. Goal: hudi-ops / bare <= 1.1.
2. An idle ingest tick: the control plane's "is there work?" check (Python, no JVM) against a
   spark-submit of the ingest job that finds nothing. Goal: the check >= 50x cheaper.

One JSON line; times are medians of the runs.
"""

from __future__ import annotations

import json
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

import common  # bench/, the script's folder
import pyarrow as pa
import pyarrow.parquet as pq

from hudi_ops.job_specs import IngestSpec
from hudi_ops.sources.files import ingest_work
from hudi_ops.spark.launch import spark_submit_command
from hudi_ops.storage import Storage

HERE = Path(__file__).parent
ROWS, PARTITIONS, ROUNDS = 200_000, 8, 3
CONF = {**common.CONF, "spark.sql.shuffle.partitions": str(PARTITIONS)}


def batch(ids: range, ts: int) -> pa.Table:
    keys = list(ids)
    return pa.table({"key": [f"key-{i:09d}" for i in keys], "part": [f"p{i % PARTITIONS}" for i in keys],
                     "ts": [ts] * len(keys), "amount": [i * 0.5 + ts for i in keys],
                     "name": [f"name-{i % 1000}" for i in keys]})


def timed(command: list[str]) -> float:
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    elapsed = time.perf_counter() - started
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    return elapsed


def ingest_command(table: Path, source: Path) -> list[str]:
    spec = IngestSpec(base_path=str(table), table_name="bench", source_path=str(source), record_key_field="key",
                      partition_path_field="part", ordering_field="ts")
    return spark_submit_command(spec.to_argv(), conf=CONF, spark_submit=common.SPARK_SUBMIT)


def main() -> None:
    root = Path(tempfile.mkdtemp(prefix="hudi-ops-bench-"))
    try:
        ops_table, bare_table, landing = root / "ops", root / "bare", root / "landing"
        pq.write_table(batch(range(ROWS), 1), root / "seed.parquet")
        landing.mkdir()
        shutil.copy(root / "seed.parquet", landing / "0.parquet")
        timed(ingest_command(ops_table, landing))
        def bare(source: Path) -> list[str]:
            return spark_submit_command([str(bare_table), str(source)], conf=CONF, spark_submit=common.SPARK_SUBMIT,
                                        application=str(HERE / "bare_hudi_upsert.py"))

        timed(bare(root / "seed.parquet"))
        ops_s, bare_s = [], []
        for n in range(1, ROUNDS + 1):
            update = batch(range(n, ROWS, 10), n + 1)
            pq.write_table(update, landing / f"{n}.parquet")
            pq.write_table(update, root / f"bare-{n}.parquet")
            pair = [(ops_s, ingest_command(ops_table, landing)), (bare_s, bare(root / f"bare-{n}.parquet"))]
            for times, command in pair if n % 2 else reversed(pair):
                times.append(timed(command))

        checks = []
        for _ in range(20):
            started = time.perf_counter()
            work = ingest_work(ops_table, Storage.for_uri(landing), "parquet")
            checks.append(time.perf_counter() - started)
            assert not work.files
        idle_submit = [timed(ingest_command(ops_table, landing)) for _ in range(ROUNDS)]
        print(json.dumps({
            "bench": "platform_overhead", "rows": ROWS, "updated_rows": len(range(1, ROWS, 10)),
            "upsert_hudi_ops_s": round(statistics.median(ops_s), 2),
            "upsert_bare_s": round(statistics.median(bare_s), 2),
            "hudi_ops_over_bare": round(statistics.median(ops_s) / statistics.median(bare_s), 3),
            "idle_check_ms": round(statistics.median(checks) * 1000, 2),
            "idle_spark_submit_s": round(statistics.median(idle_submit), 2),
            "idle_spark_submit_over_check": round(statistics.median(idle_submit) / statistics.median(checks)),
        }))
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
