"""A services group at fleet scale: one tick over 1,000 tables, and the DAG file of 1,000 tables parsed.

- `tick`: TABLES copies of a MERGE_ON_READ table Apache Hudi wrote (../shared/fixtures/hudi-rs: the
  quickstart trips with its metadata table), each measured once for compaction, clean and archive, as a
  services group's `plan` task does (hudi_ops.fleet.scheduler.measure_all: one timeline listing and one
  file-system view per table, 16 at once), in a new process. Baseline in the same run: what TABLES
  services DAGs' tasks ask per tick, each check opening the table itself (compaction to schedule and
  to execute, clean, archive), on the same 16 threads.
- `parse`: a tables config of TABLES MERGE_ON_READ tables with an ingest, a backfill and services, the
  DAG file (dags/hudi_ops_tables.py) executed in a new Python that has imported Airflow and the Spark
  provider already, as the DAG processor's parsing process has: every table in one services group
  (3 DAGs a table and the group's), against a services DAG each (4 DAGs a table). Airflow gives a DAG
  file 30 s (`dagbag_import_timeout`).

One JSON line: the seconds of each, per table, and the ratios. Storage calls per table on S3, for the
group's look against the services DAG's four, are in storage_calls.py (`group tick`).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
FIXTURE = REPO.parent / "shared" / "fixtures" / "hudi-rs" / "quickstart_trips_table" / "mor" / "avro" / \
    "v8_trips_8i3u1d.zip"
TABLES = 1000
OPTIONS = {"compaction": {}, "clean": {}, "archive": {}}

TICK = """
import json, sys, time
from concurrent.futures import ThreadPoolExecutor
from hudi_ops.fleet.scheduler import Member, measure_all
from hudi_ops.format.meta_client import MetaClient
from hudi_ops.read.service_work import archive_work, clean_work, compaction_schedule_work, plan_execution_work
paths, options, how = json.loads(sys.argv[1]), json.loads(sys.argv[2]), sys.argv[3]
started = time.perf_counter()
if how == "group":
    needs = measure_all({p: Member(p, p, options) for p in paths})
    assert not [n for n in needs.values() if isinstance(n, str)], needs
else:
    def services_dag(path):
        compaction_schedule_work(MetaClient.open(path), options["compaction"])
        plan_execution_work(MetaClient.open(path), "compaction")
        clean_work(MetaClient.open(path), options["clean"])
        archive_work(MetaClient.open(path), options["archive"])
    with ThreadPoolExecutor(16) as pool:
        list(pool.map(services_dag, paths))
print(time.perf_counter() - started)
"""

PARSE = """
import os, runpy, sys, time
import airflow.sdk, airflow.providers.apache.spark.operators.spark_submit  # what the DAG processor has imported
os.environ["HUDI_OPS_TABLES_CONFIG"] = sys.argv[2]
started = time.perf_counter()
dags = runpy.run_path(sys.argv[1])
took = time.perf_counter() - started
print(took, sum(type(v).__name__ == "DAG" for v in dags.values()))
"""


def tick(paths: list[str], how: str) -> float:
    done = subprocess.run([sys.executable, "-c", TICK, json.dumps(paths), json.dumps(OPTIONS), how],
                          capture_output=True, text=True, check=True)
    return float(done.stdout.split()[-1])


def parse(config: Path) -> tuple[float, int]:
    done = subprocess.run([sys.executable, "-c", PARSE, str(REPO / "dags" / "hudi_ops_tables.py"), str(config)],
                          capture_output=True, text=True, check=True)
    took, dags = done.stdout.split()[-2:]
    return float(took), int(dags)


def tables_config(path: Path, *, grouped: bool) -> Path:
    tables = {}
    for i in range(TABLES):
        services = {"compaction": {"hoodie.compact.inline.max.delta.commits": "5"}, "clean": {}}
        tables[f"t{i:04d}"] = {
            "base_path": f"/data/hudi/t{i:04d}", "record_key": "id", "partition_field": "dt", "ordering_field": "ts",
            "table_type": "MERGE_ON_READ", "ingest": {"source_path": f"/landing/t{i:04d}", "schedule": "*/10 * * * *"},
            "backfill": {"source_path": f"/history/t{i:04d}"},
            "services": {**services, "group": "fleet"} if grouped else services}
    config = {"defaults": {"spark_conn_id": "spark_default"}, "tables": tables,
              **({"services_groups": {"fleet": {"budget": 8}}} if grouped else {})}
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    return path


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="hudi-ops-bench-fleet-scale-") as work:
        root = Path(work)
        with zipfile.ZipFile(FIXTURE) as z:
            z.extractall(root / "fixture", [m for m in z.namelist() if not m.startswith("__MACOSX/")])
        (table,) = [p for p in (root / "fixture").iterdir() if (p / ".hoodie").is_dir()]
        paths = [str(shutil.copytree(table, root / "tables" / f"t{i:04d}")) for i in range(TABLES)]
        group_s, services_dags_s = tick(paths, "group"), tick(paths, "services_dags")
        grouped_s, grouped_dags = parse(tables_config(root / "grouped.yaml", grouped=True))
        own_s, own_dags = parse(tables_config(root / "own.yaml", grouped=False))
    print(json.dumps({
        "bench": "fleet_scale", "tables": TABLES,
        "tick": {"group_s": round(group_s, 2), "per_table_ms": round(1000 * group_s / TABLES, 2),
                 "services_dags_s": round(services_dags_s, 2)},
        "tick_services_dags_over_group": round(services_dags_s / group_s, 2),
        "parse": {"grouped_s": round(grouped_s, 2), "grouped_dags": grouped_dags,
                  "own_services_dags_s": round(own_s, 2), "own_services_dags": own_dags},
        "parse_own_over_grouped": round(own_s / grouped_s, 2)}))


if __name__ == "__main__":
    main()
