"""A services group at fleet scale: one tick over 1,000 tables, and the DAG file of 1,000 tables parsed.

- `tick`: TABLES copies of a MERGE_ON_READ table Apache Hudi wrote (../shared/fixtures/hudi-rs: the
  quickstart trips with its metadata table), each measured once for compaction, clean and archive, as a
  services group's `plan` task does (hudi_ops.fleet.scheduler.measure_all: one timeline listing and one
  file-system view per table, 16 at once), in a new process. Baseline in the same run: what TABLES
  services DAGs' tasks ask per tick, each check opening the table itself (compaction to schedule and
  to execute, clean, archive), on the same 16 threads.
- `parse`: a tables config of TABLES MERGE_ON_READ tables with an ingest, a backfill and services, the
  DAG file (dags/hudi_ops_tables.py) executed in a new Python that has done what Airflow's DAG processor
  has when its parsing process runs the file: Airflow, the Spark provider and the plugins imported
  (hudi-ops' plugin imports the DAG factory, its operators and pyarrow), then `gc.freeze()` (the DAG
  processor's manager freezes its objects before it forks, so a parse's collections skip them). Every
  table in one services group (3 DAGs a table and the group's), against a services DAG each (4 DAGs a
  table); and the grouped file once more in a Python with Airflow and the Spark provider alone
  (`grouped_cold_s`: hudi-ops' imports on top and nothing frozen, as in `airflow dags list`). Then the
  grouped fleet's DAGs from SHARDS DAG files (`tables_dags(__file__, shard=i, shards=SHARDS)`,
  docs/fleet-layout.md), each executed as the DAG processor does, in turn: the slowest file, and all
  of them (the work the DAG processor spreads over its parsing processes). Airflow gives a DAG file
  30 s (`dagbag_import_timeout`).

`fleet_scale.py` runs both, `fleet_scale.py parse` the parse alone (no fixture needed); `--tables N` and
`--shards N` change TABLES (1,000) and SHARDS (4). One JSON line: the seconds of each, per table, and
the ratios. Storage calls per table on S3, for the group's look against the services DAG's four, are in
storage_calls.py (`group tick`).
"""

from __future__ import annotations

import argparse
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
TABLES, SHARDS = 1000, 4
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
import gc, os, runpy, sys, time
import airflow.sdk, airflow.providers.apache.spark.operators.spark_submit
if sys.argv[3] == "dag_processor":  # what it has done when it forks a parse: plugins loaded (hudi-ops': the DAG
    from airflow import plugins_manager  # factory with it), then gc.freeze() (its manager's, against copy-on-write)
    plugins_manager.ensure_plugins_loaded()
    gc.freeze()
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


#: a DAG file of a sharded fleet (docs/fleet-layout.md)
SHARD_FILE = """from hudi_ops.airflow.dag_factory.dag_files import tables_dags

globals().update(tables_dags(__file__, shard={shard}, shards={shards}))
"""


def parse(config: Path, dag_file: Path = REPO / "dags" / "hudi_ops_tables.py", *,
          preloaded: str = "dag_processor") -> tuple[float, int]:
    """The DAG file executed in a new Python that has imported what Airflow's DAG processor has when it parses
    it (`preloaded="cold"`: Airflow and the Spark provider alone, as in `airflow dags list`): seconds, DAGs."""
    done = subprocess.run([sys.executable, "-c", PARSE, str(dag_file), str(config), preloaded],
                          capture_output=True, text=True, check=True)
    took, dags = done.stdout.split()[-2:]
    return float(took), int(dags)


def parse_shards(config: Path, folder: Path, shards: int) -> list[tuple[float, int]]:
    """Each shard's DAG file parsed alone: seconds and DAGs."""
    folder.mkdir()
    parsed = []
    for shard in range(shards):
        dag_file = folder / f"hudi_ops_tables_{shard}.py"
        dag_file.write_text(SHARD_FILE.format(shard=shard, shards=shards))
        parsed.append(parse(config, dag_file))
    return parsed


def parse_figures(root: Path, tables: int, shards: int) -> dict:
    grouped = tables_config(root / "grouped.yaml", tables, grouped=True)
    grouped_s, grouped_dags = parse(grouped)
    cold_s, _ = parse(grouped, preloaded="cold")
    own_s, own_dags = parse(tables_config(root / "own.yaml", tables, grouped=False))
    sharded = parse_shards(grouped, root / "shards", shards)
    assert sum(dags for _, dags in sharded) == grouped_dags, (sharded, grouped_dags)
    slowest, total = max(s for s, _ in sharded), sum(s for s, _ in sharded)
    figures = {"grouped_s": grouped_s, "grouped_dags": grouped_dags, "grouped_cold_s": cold_s,
               "own_services_dags_s": own_s, "own_services_dags": own_dags,
               "shards": shards, "slowest_shard_s": slowest, "all_shards_s": total}
    return {"parse": {k: round(v, 2) if isinstance(v, float) else v for k, v in figures.items()},
            "parse_own_over_grouped": round(own_s / grouped_s, 2),
            "parse_grouped_over_slowest_shard": round(grouped_s / slowest, 2)}


def tick_figures(root: Path, tables: int) -> dict:
    with zipfile.ZipFile(FIXTURE) as z:
        z.extractall(root / "fixture", [m for m in z.namelist() if not m.startswith("__MACOSX/")])
    (table,) = [p for p in (root / "fixture").iterdir() if (p / ".hoodie").is_dir()]
    paths = [str(shutil.copytree(table, root / "tables" / f"t{i:04d}")) for i in range(tables)]
    group_s, services_dags_s = tick(paths, "group"), tick(paths, "services_dags")
    return {"tick": {"group_s": round(group_s, 2), "per_table_ms": round(1000 * group_s / tables, 2),
                     "services_dags_s": round(services_dags_s, 2)},
            "tick_services_dags_over_group": round(services_dags_s / group_s, 2)}


def tables_config(path: Path, count: int, *, grouped: bool) -> Path:
    tables = {}
    for i in range(count):
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
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("mode", nargs="?", choices=("all", "parse"), default="all")
    ap.add_argument("--tables", type=int, default=TABLES)
    ap.add_argument("--shards", type=int, default=SHARDS)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="hudi-ops-bench-fleet-scale-") as work:
        root = Path(work)
        ticks = tick_figures(root, args.tables) if args.mode == "all" else {}
        parses = parse_figures(root, args.tables, args.shards)
    print(json.dumps({"bench": "fleet_scale", "tables": args.tables, **ticks, **parses}))


if __name__ == "__main__":
    main()
