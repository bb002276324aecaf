"""A services tick with nothing due: the control plane's checks against spark-submits that find nothing.

A MERGE_ON_READ table gets two ingest commits: below Hudi's compaction trigger, nothing to clean,
and one file group per partition, which clustering leaves alone once single-group clustering is
off. The Airflow services DAG would ask `hudi_ops.read.service_work` about compaction, clustering
and clean and skip all three; without the checks each task is a spark-submit that starts Spark and
finds nothing. One JSON line: the three checks together, the three spark-submits together, and
their ratio.
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

from hudi_ops.format.meta_client import MetaClient
from hudi_ops.job_specs import CleanSpec, ClusterSpec, CompactSpec, IngestSpec
from hudi_ops.read.service_work import clean_work, clustering_schedule_work, compaction_schedule_work
from hudi_ops.spark.launch import spark_submit_command

ROUNDS = 3
OPTIONS = {"hoodie.clustering.plan.strategy.single.group.clustering.enabled": "false"}


def submit(args: list[str]) -> dict:
    started = time.perf_counter()
    done = subprocess.run(spark_submit_command(args, conf=common.CONF, spark_submit=common.SPARK_SUBMIT),
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    result = json.loads([ln for ln in done.stdout.splitlines() if ln.startswith("{")][-1])
    return {**result, "elapsed_s": time.perf_counter() - started}


def main() -> None:
    root = Path(tempfile.mkdtemp(prefix="hudi-ops-bench-"))
    try:
        table, landing = root / "t", root / "landing"
        landing.mkdir()
        for n in range(2):
            pq.write_table(pa.table({"key": [f"k{i}" for i in range(1000)], "part": ["a", "b"] * 500,
                                     "ts": [n] * 1000}), landing / f"{n}.parquet")
            submit(IngestSpec(base_path=str(table), table_name="t", source_path=str(landing), record_key_field="key",
                              partition_path_field="part", ordering_field="ts", table_type="MERGE_ON_READ").to_argv())

        checks = []
        for _ in range(20):
            started = time.perf_counter()
            checked = (compaction_schedule_work, clustering_schedule_work, clean_work)
            due = [check(MetaClient.open(table), OPTIONS).due for check in checked]  # one look per task
            checks.append(time.perf_counter() - started)
            assert due == [False, False, False], due
        ticks = []
        for _ in range(ROUNDS):
            jobs = [submit(spec.to_argv()) for spec in (
                CompactSpec(base_path=str(table), mode="schedule", hoodie_conf=OPTIONS),
                ClusterSpec(base_path=str(table), mode="schedule", hoodie_conf=OPTIONS),
                CleanSpec(base_path=str(table), hoodie_conf=OPTIONS))]
            assert all(j["instant"] is None for j in jobs), jobs  # Hudi agrees: nothing to do
            ticks.append(sum(j["elapsed_s"] for j in jobs))
        print(json.dumps({
            "bench": "services_idle_tick",
            "checks_ms": round(statistics.median(checks) * 1000, 2),
            "spark_submits_s": round(statistics.median(ticks), 2),
            "spark_submits_over_checks": round(statistics.median(ticks) / statistics.median(checks)),
        }))
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
