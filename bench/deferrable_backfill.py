"""Worker slots and worker memory a backfill holds while YARN runs its days: three ways of waiting.

One Airflow (scheduler with LocalExecutor, triggerer: local_platform.local_airflow) on a loopback YARN
(local_platform.yarn_cluster, 16 GiB of containers: room for every day's driver and a few executors, as
YARN's FIFO scheduler has no cap on drivers and a cluster whose drivers hold all its memory runs no job),
and a backfill of
DAYS days (`airflow backfill create`, all runs at once) of a backfill DAG in YARN cluster mode, three
times, each into a table of its own:
- `submit_waits`: spark-submit waits for each application's end (`spark.yarn.submit.waitAppCompletion=true`,
  hudi-ops' behaviour before it followed applications through the ResourceManager);
- `followed`: the task follows its application through the ResourceManager's REST API; spark-submit's
  JVM has ended, the task's Python waits;
- `deferred`: the task defers to the triggerer while its application runs (`deferrable: true`).
Sampled every second from /proc: the tasks' runner processes (each one a worker slot) and the memory
(RSS) of each with its children (spark-submit's JVM). Ratios: submit_waits over deferred, in slot-seconds
and memory-seconds; and the backfill's wall time, deferred over submit_waits.

    .venv/bin/python bench/deferrable_backfill.py [--days 10]
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import shutil
import sys
import tempfile
import threading
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from local_platform.local_airflow import LocalAirflow
from local_platform.yarn_cluster import YarnCluster
from local_platform.zookeeper_server import ZookeeperServer

FIRST_DAY = dt.date(2026, 11, 1)
#: a task's runner: "airflow worker -- <task instance id>" (a LocalExecutor's own worker says "LocalExecutor:")
TASK_RUNNER, EXECUTOR = "airflow worker -- ", "airflow worker -- LocalExecutor"
VARIANTS = {"submit_waits": {"conf": {"spark.yarn.submit.waitAppCompletion": "true"}},
            "followed": {}, "deferred": {"deferrable": True}}
DAGS = '''
import datetime as dt, json
from airflow.sdk import DAG
from hudi_ops.airflow.timetables.daily_backfill import DailyBackfillTimetable
from hudi_ops.airflow.operators.spark_jobs import HudiBackfillOperator

SETTINGS = json.loads({settings!r})
for name, variant in SETTINGS["variants"].items():
    with DAG(f"backfill_{{name}}", schedule=DailyBackfillTimetable(), start_date=dt.datetime(2026, 11, 1),
             catchup=False, max_active_runs=SETTINGS["days"]) as dag:
        HudiBackfillOperator(
            task_id="backfill", conn_id="spark_yarn", conf={{**SETTINGS["conf"], **variant.get("conf", {{}})}},
            deferrable=variant.get("deferrable", False), base_path=SETTINGS["root"] + "/tables/" + name,
            table_name=name, record_key_field="trip_id", partition_path_field="dt", ordering_field="ts",
            source_path=SETTINGS["root"] + "/days", retries=0)
    globals()[dag.dag_id] = dag
'''


def write_days(folder: Path, days: int) -> None:
    for n in range(days):
        day = (FIRST_DAY + dt.timedelta(days=n)).isoformat()
        rows = [{"trip_id": f"{day}-{i:05d}", "dt": day, "ts": 1, "fare": float(i)} for i in range(2000)]
        (folder / f"dt={day}").mkdir(parents=True)
        pq.write_table(pa.Table.from_pylist(rows), folder / f"dt={day}" / "part.parquet")


class Sampler:
    """Every second: how many task runners run, and their memory with their children's, in MiB."""

    def __init__(self) -> None:
        self.samples: list[tuple[int, float]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> Sampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        while not self._stop.wait(1.0):
            self.samples.append(sample())

    def figures(self) -> dict[str, float]:
        return {"slot_s": sum(n for n, _ in self.samples), "memory_mib_s": round(sum(m for _, m in self.samples)),
                "peak_slots": max((n for n, _ in self.samples), default=0),
                "peak_memory_mib": round(max((m for _, m in self.samples), default=0.0))}


def sample() -> tuple[int, float]:
    processes = {}  # pid: (parent, title, rss in MiB)
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            parent = int(stat.read_text().rsplit(")", 1)[1].split()[1])
            title = (stat.parent / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
            rss = int((stat.parent / "statm").read_text().split()[1]) * 4096 / 2**20
        except (OSError, ValueError, IndexError):
            continue
        processes[int(stat.parent.name)] = (parent, title, rss)
    runners = {pid for pid, (_, title, _) in processes.items()
               if title.startswith(TASK_RUNNER) and not title.startswith(EXECUTOR)}
    memory = 0.0
    for pid, (_, _, rss) in processes.items():
        ancestor = pid
        while ancestor in processes and ancestor not in runners:
            ancestor = processes[ancestor][0]
        memory += rss if ancestor in runners else 0.0
    return len(runners), memory


def backfill(airflow: LocalAirflow, name: str, days: int) -> dict[str, float]:
    dag_id = f"backfill_{name}"
    last = FIRST_DAY + dt.timedelta(days=days - 1)
    started = time.monotonic()
    with Sampler() as sampler:
        airflow.cli("backfill", "create", "--dag-id", dag_id, "--from-date", FIRST_DAY.isoformat(),
                    "--to-date", last.isoformat(), "--max-active-runs", str(days), "--run-on-latest-version")
        runs = until_runs(airflow, dag_id, days)
        states = airflow.wait_for_runs([(dag_id, run) for run in runs], timeout_s=3600)
    assert set(states.values()) == {"success"}, states
    return {**sampler.figures(), "wall_s": round(time.monotonic() - started, 1)}


def until_runs(airflow: LocalAirflow, dag_id: str, days: int) -> list[str]:
    deadline = time.monotonic() + 120
    while len(runs := airflow.api("GET", f"/api/v2/dags/{dag_id}/dagRuns?limit=100")["dag_runs"]) < days:
        assert time.monotonic() < deadline, f"{dag_id}: {len(runs)} of {days} runs created"
        time.sleep(1)
    return [run["dag_run_id"] for run in runs]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--days", type=int, default=10)
    days = parser.parse_args().days
    root = Path(tempfile.mkdtemp(prefix="hudi-ops-bench-"))
    zookeeper = ZookeeperServer(root / "zk")
    try:
        zookeeper.start()
        write_days(root / "days", days)
        with YarnCluster(root / "yarn", memory_mb=16384) as yarn:
            # ten applications at once on 2 cores: a driver may take minutes to start its SparkContext
            conf = {**yarn.spark_conf(sys.executable), "spark.yarn.am.waitTime": "900s"}
            settings = {"root": str(root), "days": days, "variants": VARIANTS, "conf": conf}
            (root / "dags").mkdir()
            (root / "dags" / "backfills.py").write_text(DAGS.format(settings=json.dumps(settings)))
            env = {**yarn.env(), "AIRFLOW_CONN_SPARK_YARN": json.dumps(
                       {"conn_type": "spark", "host": "yarn", "extra": {"deploy-mode": "cluster"}}),
                   "AIRFLOW_CONN_HUDI_ZOOKEEPER_DEFAULT": json.dumps(
                       {"conn_type": "hudi_zookeeper", "host": zookeeper.host, "port": zookeeper.port,
                        "extra": {"base_path": "/bench"}})}
            with LocalAirflow(root / "airflow", dags_folder=root / "dags", env=env, triggerer=True,
                              parallelism=days) as airflow:
                airflow.wait_for_dags(f"backfill_{name}" for name in VARIANTS)
                results = {name: backfill(airflow, name, days) for name in VARIANTS}
    finally:
        zookeeper.stop()
        shutil.rmtree(root, ignore_errors=True)
    waits, deferred = results["submit_waits"], results["deferred"]
    print(json.dumps({
        "bench": "deferrable_backfill", "days": days, "results": results,
        "slot_s_submit_waits_over_deferred": round(waits["slot_s"] / max(deferred["slot_s"], 1), 1),
        "memory_submit_waits_over_deferred": round(waits["memory_mib_s"] / max(deferred["memory_mib_s"], 1), 1),
        "wall_deferred_over_submit_waits": round(deferred["wall_s"] / waits["wall_s"], 2)}))


if __name__ == "__main__":
    main()
