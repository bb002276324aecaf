"""Tasks in YARN cluster mode under a real Airflow (scheduler, LocalExecutor, triggerer: LocalAirflow) on the
loopback YARN: a retry takes up the application of a try whose task runner was killed with `kill -9`, or
takes its result once it ended, and a deferrable task waits in the triggerer, holding no worker slot.

Each job is held mid-way by the table's ZooKeeper lock, which the test holds (its driver waits in the
lock's line), so that the kill, the pause and the deferral happen while YARN runs it, whatever the
machine's speed.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import time
from pathlib import Path

import psutil
import pytest

from hudi_ops.airflow.operators.spark_jobs import HudiIngestOperator
from hudi_ops.locks.held_lock import HeldLock
from hudi_ops.spark.cluster_mode import application_tag
from local_platform.local_airflow import LocalAirflow
from local_platform.yarn_cluster import YarnCluster
from tests.airflow.conftest import ZOOKEEPER_CONN_ENV, zookeeper_conn
from tests.tables import Model, read_hudi_rs, read_spark, trips, write_source

pytestmark = [pytest.mark.spark, pytest.mark.slow]

CONN_ID = "spark_yarn"
DAY = "2026-11-20"
#: long enough for a driver to wait in the lock's line while the test kills, pauses and lets go
HOODIE_CONF = {"hoodie.write.lock.wait_time_ms": "600000"}
DAGS = '''
import datetime as dt, json
from airflow.sdk import DAG
from hudi_ops.airflow.operators.spark_jobs import HudiBackfillOperator, HudiIngestOperator

SETTINGS = json.loads({settings!r})
for dag_id, table in SETTINGS["tables"].items():
    with DAG(dag_id, schedule=None, catchup=False, max_active_runs=1) as dag:
        kwargs = dict(conn_id="{conn_id}", conf=SETTINGS["conf"], base_path=table["path"], table_name=dag_id,
                      record_key_field="trip_id", partition_path_field="dt", ordering_field="ts",
                      table_type="COPY_ON_WRITE", source_path=table["source"], hoodie_conf=SETTINGS["hoodie_conf"],
                      poll_interval=1, retries=1, retry_delay=dt.timedelta(seconds=2))
        if table["deferrable"]:
            HudiBackfillOperator(task_id="job", start="{day}", end="{day}", deferrable=True, **kwargs)
        else:
            HudiIngestOperator(task_id="job", **kwargs)
    globals()[dag_id] = dag
'''
#: the titles Airflow gives a try's task runner (its task instance id follows) and a LocalExecutor's worker
TASK_RUNNER = "airflow worker -- "
EXECUTOR_WORKER = "airflow worker -- LocalExecutor:"
TABLES = {"resume_running": False, "resume_ended": False, "deferred_day": True}


@pytest.fixture(scope="module")
def airflow_on_yarn(tmp_path_factory, node_python, zookeeper_server):
    zookeeper_server.start()  # the session's (each test's `zookeeper_connection` keeps it started)
    home = tmp_path_factory.mktemp("resumable")
    tables = {name: {"path": str(home / "tables" / name), "source": str(home / "sources" / name),
                     "deferrable": deferrable} for name, deferrable in TABLES.items()}
    with YarnCluster(home / "yarn", memory_mb=6144) as yarn:
        settings = json.dumps({"tables": tables, "conf": yarn.spark_conf(node_python), "hoodie_conf": HOODIE_CONF})
        (home / "dags").mkdir()
        (home / "dags" / "resumable.py").write_text(DAGS.format(settings=settings, conn_id=CONN_ID, day=DAY))
        env = {**yarn.env(), ZOOKEEPER_CONN_ENV: zookeeper_conn(zookeeper_server),
               f"AIRFLOW_CONN_{CONN_ID.upper()}": json.dumps(
                   {"conn_type": "spark", "host": "yarn", "extra": {"deploy-mode": "cluster"}})}
        with LocalAirflow(home / "airflow", dags_folder=home / "dags", env=env, triggerer=True) as airflow:
            airflow.wait_for_dags(TABLES)
            yield airflow, yarn, tables


def held_lock(dag_id: str, table: dict) -> HeldLock:
    """The table's lock, as its job takes it (the task's options: the connection the Airflow has)."""
    op = HudiIngestOperator(task_id="lock", base_path=table["path"], table_name=dag_id, record_key_field="trip_id",
                            hoodie_conf=HOODIE_CONF)
    return HeldLock(op.job_options(), dag_id, wait_s=60)


def until(what, timeout_s: float = 300.0, every_s: float = 1.0):
    deadline = time.monotonic() + timeout_s
    while not (value := what()):
        assert time.monotonic() < deadline, f"not within {timeout_s:g}s: {what.__doc__ or what}"
        time.sleep(every_s)
    return value


def tagged_applications(yarn: YarnCluster, dag_id: str) -> list[dict]:
    """The applications YARN has of the run's task, by the tag every try of it gives its application."""
    tag = application_tag(dag_id, "job", "run1", -1)
    return [app for app in yarn.applications() if tag in app["applicationTags"].split(",")]


def assert_one_application_and_the_rows(airflow, yarn, spark, tables, dag_id: str, app_id: str, rows) -> None:
    """The run succeeded with one application for its task, and the table holds the rows written (hudi-rs, Spark)."""
    assert airflow.wait_for_runs([(dag_id, "run1")])[(dag_id, "run1")] == "success"
    assert [(a["id"], a["finalStatus"]) for a in tagged_applications(yarn, dag_id)] == [(app_id, "SUCCEEDED")]
    path = tables[dag_id]["path"]
    assert read_hudi_rs(path) == Model().upsert(rows).expected() == read_spark(spark, path)


def start_held_run(airflow, tables, dag_id: str, rows: list[dict]) -> HeldLock:
    """A run of `dag_id` whose YARN application waits in its table's lock, which is held."""
    write_source(Path(tables[dag_id]["source"]) / (f"dt={DAY}" if tables[dag_id]["deferrable"] else "") / "a.parquet",
                 rows)
    lock = held_lock(dag_id, tables[dag_id]).__enter__()
    before = lock.waiting()
    airflow.trigger(dag_id, "run1")
    lock.wait_for_waiters(before + 1, timeout_s=300)  # its driver runs on YARN, in the lock's line
    return lock


def kill_task_runner(airflow, dag_id: str) -> None:
    """`kill -9` of the task's runner (the process the supervisor forked for the try), as a worker's death."""
    ti = airflow.task_instance(dag_id, "run1", "job")
    assert ti["state"] == "running", ti
    (pid,) = _titled(f"{TASK_RUNNER}{ti['id']}")
    os.kill(pid, signal.SIGKILL)


def test_a_retry_takes_up_the_application_of_a_try_killed_with_kill_9(airflow_on_yarn, zookeeper_connection, spark):
    airflow, yarn, tables = airflow_on_yarn
    dag_id, rows = "resume_running", trips(DAY, range(20), ts=1)
    lock = start_held_run(airflow, tables, dag_id, rows)
    try:
        (app,) = tagged_applications(yarn, dag_id)
        kill_task_runner(airflow, dag_id)
        retry = until(lambda: (ti := airflow.task_instance(dag_id, "run1", "job"))["try_number"] == 2
                      and ti["state"] == "running" and ti)
        until(lambda: "still runs: this try takes it up" in airflow.task_log(dag_id, "run1", "job", 2))
        assert _app_state(yarn, app["id"]) in ("ACCEPTED", "RUNNING"), retry  # the same one, never ended
    finally:
        lock.__exit__(None, None, None)
    assert_one_application_and_the_rows(airflow, yarn, spark, tables, dag_id, app["id"], rows)


def test_a_retry_after_the_application_ended_takes_its_result_without_a_new_one(
    airflow_on_yarn, zookeeper_connection, spark
):
    airflow, yarn, tables = airflow_on_yarn
    dag_id, rows = "resume_ended", trips(DAY, range(15), ts=1)
    lock = start_held_run(airflow, tables, dag_id, rows)
    try:
        (app,) = tagged_applications(yarn, dag_id)
        airflow.api("PATCH", f"/api/v2/dags/{dag_id}", {"is_paused": True})  # no retry is scheduled while paused
        kill_task_runner(airflow, dag_id)
        until(lambda: airflow.task_instance(dag_id, "run1", "job")["state"] == "up_for_retry")
    finally:
        lock.__exit__(None, None, None)
    until(lambda: _app_state(yarn, app["id"]) == "FINISHED")  # it committed with no task watching
    airflow.api("PATCH", f"/api/v2/dags/{dag_id}", {"is_paused": False})
    assert_one_application_and_the_rows(airflow, yarn, spark, tables, dag_id, app["id"], rows)
    assert "ended well: this try takes its result" in airflow.task_log(dag_id, "run1", "job", 2)


def test_a_deferrable_backfill_day_waits_in_the_triggerer_holding_no_worker_slot(
    airflow_on_yarn, zookeeper_connection, spark
):
    airflow, yarn, tables = airflow_on_yarn
    dag_id, rows = "deferred_day", trips(DAY, range(12), ts=1)
    lock = start_held_run(airflow, tables, dag_id, rows)
    try:
        ti = until(lambda: (ti := airflow.task_instance(dag_id, "run1", "job"))["state"] == "deferred" and ti)
        pool = airflow.api("GET", "/api/v2/pools/default_pool")
        assert (pool["running_slots"], pool["deferred_slots"], pool["queued_slots"]) == (0, 1, 0), pool
        assert not _titled(f"{TASK_RUNNER}{ti['id']}")  # the try's runner has ended
        # this Airflow's: make test's other worker may run an Airflow of its own, whose workers are busy
        workers = _titled(EXECUTOR_WORKER, airflow)
        assert workers and all(title.endswith("<idle>") for title in workers.values()), workers
        assert not _spark_submits(airflow), "a spark-submit runs while the task is deferred"
        trigger = ti.get("trigger") or {}
        assert "YarnApplicationTrigger" in trigger.get("classpath", ""), ti
        assert ti.get("triggerer_job"), ti  # the triggerer holds it
    finally:
        lock.__exit__(None, None, None)
    (app,) = tagged_applications(yarn, dag_id)
    assert_one_application_and_the_rows(airflow, yarn, spark, tables, dag_id, app["id"], rows)
    assert airflow.task_instance(dag_id, "run1", "job")["try_number"] == 1  # resumed, not retried


def _app_state(yarn: YarnCluster, app_id: str) -> str:
    return next(a for a in yarn.applications() if a["id"] == app_id)["state"]


def _titled(prefix: str, airflow: LocalAirflow | None = None) -> dict[int, str]:
    """The processes whose title (Airflow sets it) starts with `prefix`, of `airflow` alone when given: pid, title."""
    return {pid: line for pid, line in _processes(airflow).items() if line.startswith(prefix)}


def _spark_submits(airflow: LocalAirflow) -> list[int]:
    """spark-submit JVMs started by this Airflow's processes."""
    return [pid for pid, line in _processes(airflow).items() if "org.apache.spark.deploy.SparkSubmit" in line]


def _processes(airflow: LocalAirflow | None) -> dict[int, str]:
    """Each process's pid and command line (or title); of `airflow`'s processes and their descendants alone when
    given (a title Airflow sets overwrites the process's environment, so its home cannot tell them apart)."""
    if airflow is None:
        processes = list(psutil.process_iter())
    else:
        roots = [psutil.Process(pid) for pid in airflow.pids()]
        processes = [*roots, *(child for root in roots for child in root.children(recursive=True))]
    found = {}
    for process in processes:
        with contextlib.suppress(psutil.Error):
            found[process.pid] = " ".join(process.cmdline()).strip()
    return found
