"""The operators in cluster deploy mode on a real YARN cluster: Hadoop's ResourceManager and NodeManager on
loopback (local_platform.yarn_cluster), the driver in a YARN container, not in the task.

The nodes' Python is an interpreter that has hudi-ops' dependencies but not hudi-ops (a venv that
sees this one's site-packages without running its .pth files, so not the editable install): a job
imports the package only from the zip the task ships. The table and ZooKeeper are this machine's, as
a cluster's shared storage and ensemble would be.
"""

from __future__ import annotations

import json
import os
import re
import sys
import threading
import time
from pathlib import Path

import pytest
from airflow.sdk.exceptions import AirflowException

from hudi_ops.airflow.operators.spark_jobs import HudiBackfillOperator, HudiIngestOperator
from hudi_ops.airflow.operators.table_services import HudiCleanOperator, HudiCompactionOperator
from hudi_ops.job_specs import IngestSpec
from hudi_ops.locks.held_lock import HeldLock
from hudi_ops.spark.__main__ import main
from hudi_ops.spark.cluster_mode import RESULTS_FOLDER
from local_platform.yarn_cluster import YarnCluster
from tests.integration.test_spark_jobs import trips_args
from tests.tables import Model, read_hudi_rs, read_spark, trips, write_source

# make test-long's: make test keeps YARN's start (test_yarn_cluster.py) and the operators' cluster-mode commands
# (test_operators.py)
pytestmark = [pytest.mark.spark, pytest.mark.slow, pytest.mark.long]

CONN_ID = "spark_yarn"
DAY1, DAY2 = "2026-11-20", "2026-11-21"
#: the services' (a writer given the compaction's trigger compacts inline: Hudi's datasource does for MERGE_ON_READ)
SERVICES = {"hoodie.compact.inline.max.delta.commits": "2", "hoodie.cleaner.policy": "KEEP_LATEST_FILE_VERSIONS",
            "hoodie.cleaner.fileversions.retained": "1"}


@pytest.fixture(scope="module")
def yarn(tmp_path_factory):
    with YarnCluster(tmp_path_factory.mktemp("yarn"), memory_mb=6144) as cluster, pytest.MonkeyPatch.context() as mp:
        for key, value in cluster.env().items():
            mp.setenv(key, value)
        # the worker finds spark-submit on its PATH, as the Spark provider assumes (pip's, beside this Python)
        mp.setenv("PATH", os.pathsep.join([str(Path(sys.executable).parent), os.environ["PATH"]]))
        mp.setenv(f"AIRFLOW_CONN_{CONN_ID.upper()}", json.dumps(
            {"conn_type": "spark", "host": "yarn", "extra": {"deploy-mode": "cluster"}}))
        yield cluster


#: a `hoodie.*` option with its value, as a command line would carry one (a key alone, or a file name, is not)
HOODIE_OPTION = r"hoodie\.[\w.]+="


class Argv:
    """The command lines of this test's processes (its spark-submits, YARN's containers), sampled while jobs
    run: none may match `option` (a `hoodie.*` key with its value); `seen` keeps the lines that did. A file
    name is no option: Hadoop's local file system runs `chmod 0644 .../.hoodie/.hoodie.properties.crc`, which
    a bare "hoodie." matched (CI). Processes this worker had before the block (the YARN daemons, the
    session's Spark) are not this test's: told apart by pid and start time, as a pid is reused."""

    def __init__(self, option: str) -> None:
        self.option, self.seen, self.sampled = re.compile(option), set(), 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._before: set[tuple[int, str]] = set()

    def __enter__(self) -> Argv:
        self._before = {(pid, _started(pid)) for pid in _descendants(os.getpid())}
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def _sample(self) -> None:
        while not self._stop.wait(0.2):
            for pid in _descendants(os.getpid()):
                if (pid, _started(pid)) in self._before:
                    continue
                try:
                    argv = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
                except OSError:
                    continue
                self.sampled += 1
                if self.option.search(argv):
                    self.seen.add(argv)


def _started(pid: int) -> str:
    """A process's start time (field 22 of its stat), "" once it is gone."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19]
    except OSError:
        return ""


def _descendants(root: int) -> set[int]:
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    found, todo = set(), [root]
    while todo:
        for child in children.get(todo.pop(), []):
            found.add(child)
            todo.append(child)
    return found


def operator(cls, yarn, node_python, table, **kwargs):
    kwargs.setdefault("table_name", table.name)
    return cls(task_id=cls.__name__, conn_id=CONN_ID, base_path=str(table), conf=yarn.spark_conf(node_python),
               **kwargs)


def writer(cls, yarn, node_python, table, source, **kwargs):
    kwargs.setdefault("table_type", "MERGE_ON_READ")
    return operator(cls, yarn, node_python, table, record_key_field="trip_id", partition_path_field="dt",
                    ordering_field="ts", source_path=str(source), **kwargs)


def context(run_id="manual__1"):
    return {"run_id": run_id, "outlet_events": _Events()}


class _Events(dict):
    def __missing__(self, key):
        self[key] = _Added()
        return self[key]


class _Added(list):
    def add(self, asset, extra=None):
        self.append((asset.uri, extra))


def test_ingest_backfill_compaction_and_clean_commit_in_cluster_mode_on_yarn(
    yarn, node_python, zookeeper_connection, spark, tmp_path
):
    table, landing, days = tmp_path / "trips_yarn", tmp_path / "landing", tmp_path / "days"
    first = trips(DAY1, range(30), ts=1) + trips(DAY2, range(30), ts=1)
    write_source(landing / "a.parquet", first)
    corrections = trips(DAY1, range(0, 30, 3), ts=2, fare=99.0)
    write_source(days / f"dt={DAY1}" / "fix.parquet", corrections)
    model = Model().upsert(first)

    ingest = writer(HudiIngestOperator, yarn, node_python, table, landing)
    with Argv(HOODIE_OPTION) as argv:
        added = context()
        ingested = ingest.execute(added)
        backfilled = writer(HudiBackfillOperator, yarn, node_python, table, days, start=DAY1,
                            end=DAY1).execute(context())
        model.upsert(corrections)
        compacted = operator(HudiCompactionOperator, yarn, node_python, table, hoodie_conf=SERVICES).execute(context())
        cleaned = operator(HudiCleanOperator, yarn, node_python, table, hoodie_conf=SERVICES).execute(context())
    # what each job did came back from the cluster: its final line, from the table's storage
    assert (ingested["outcome"], ingested["inserts"]) == ("committed", 60), ingested
    assert (backfilled["outcome"], backfilled["updates"]) == ("committed", 10), backfilled
    assert compacted["outcome"] == "completed" and compacted["file_groups"] >= 1, compacted
    assert cleaned["outcome"] == "completed" and cleaned["files"] >= 1, cleaned
    ((_, extra),) = next(iter(added["outlet_events"].values()))
    assert extra["instant"] == ingested["instant"]
    assert not list((table / RESULTS_FOLDER).iterdir())  # each read back and removed
    # each ran as a YARN application, once, tagged for the task's on_kill
    apps = sorted(yarn.applications(), key=lambda a: a["startedTime"])
    assert [(a["name"], a["finalStatus"]) for a in apps] == [
        (f"hudi-ops-{job}-trips_yarn", "SUCCEEDED") for job in ("ingest", "backfill", "compact", "clean")]
    assert all(a["applicationTags"].startswith("hudi-ops-") for a in apps)
    # the options travelled as a file: no container's command line or environment (its launch script) holds
    # them, nor any process the sampling saw
    scripts = yarn.launch_scripts()
    assert len(scripts) >= 8  # a driver, an executor each
    assert not [p for p in scripts if re.search(HOODIE_OPTION, p.read_text())]
    assert argv.sampled > 100 and argv.seen == set()
    assert re.search(HOODIE_OPTION, "--conf spark.hadoop.hoodie.write.lock.zookeeper.url=127.0.0.1")
    assert not re.search(HOODIE_OPTION, "chmod 0644 /t/.hoodie/.hoodie.properties.crc")
    expected = model.expected()
    assert read_hudi_rs(table) == expected == read_spark(spark, table)
    assert read_hudi_rs(table, read_optimized=True) == expected  # the compaction wrote every update


def test_a_write_conflict_exits_3_through_yarn_and_commits_on_the_retry(
    yarn, node_python, zookeeper_connection, spark, tmp_path, capsys
):
    table = tmp_path / "trips_race"
    a, b = trips(DAY1, range(0, 30), ts=2, fare=50.0), trips(DAY1, range(20, 50), ts=3, fare=60.0)
    write_source(tmp_path / "a" / "a.parquet", a)
    write_source(tmp_path / "b" / "b.parquet", b)
    # a wait for the lock long enough for both applications to start on two cores
    race = {"hoodie.write.lock.wait_time_ms": "300000"}
    ops = {name: writer(HudiIngestOperator, yarn, node_python, table, tmp_path / name, table_type="COPY_ON_WRITE",
                        hoodie_conf=race) for name in "ab"}
    # the table and the file group both update, made here in this process
    seed = trips(DAY1, range(50), ts=1)
    write_source(tmp_path / "seed" / "seed.parquet", seed)
    assert main(trips_args(IngestSpec, table, tmp_path / "seed", table_name=table.name, table_type="COPY_ON_WRITE",
                           hoodie_conf=ops["a"].job_options()), spark=spark) == 0
    outcomes: dict[str, object] = {}

    def run(name):
        try:
            outcomes[name] = ops[name].execute(context())
        except AirflowException as e:
            outcomes[name] = e

    # both take their instants behind the held lock, released together: each writes before the other commits
    with HeldLock(ops["a"].job_options(), table.name, wait_s=60) as lock:
        threads = [threading.Thread(target=run, args=(name,)) for name in "ab"]
        for t in threads:
            t.start()
        lock.line_up_writers(2, timeout_s=300)
    for t in threads:
        t.join()
    failed = [name for name, o in outcomes.items() if isinstance(o, AirflowException)]
    assert len(failed) == 1, outcomes
    (loser,) = failed
    error = outcomes[loser]
    assert type(error) is AirflowException  # Airflow retries it: not an AirflowFailException
    assert str(error).startswith("write conflict (exit 3), retried with backoff: write conflict: instant ")
    lost = next(app for app in yarn.applications() if app["finalStatus"] == "FAILED")
    assert "exit" in lost["diagnostics"] and "status 3" in lost["diagnostics"], lost["diagnostics"]

    retried = writer(HudiIngestOperator, yarn, node_python, table, tmp_path / loser, table_type="COPY_ON_WRITE")
    assert retried.execute(context("manual__1"))["outcome"] == "committed"
    winner_rows, loser_rows = (a, b) if loser == "b" else (b, a)
    expected = Model().upsert(seed).upsert(winner_rows).upsert(loser_rows).expected()
    assert read_hudi_rs(table) == expected == read_spark(spark, table)


def test_killing_the_task_kills_its_yarn_application(yarn, node_python, zookeeper_connection, tmp_path):
    write_source(tmp_path / "landing" / "a.parquet", trips(DAY1, range(10), ts=1))
    op = writer(HudiIngestOperator, yarn, node_python, tmp_path / "trips_killed", tmp_path / "landing")
    failure: list[BaseException] = []

    def run():
        try:
            op.execute(context())
        except BaseException as e:
            failure.append(e)

    task = threading.Thread(target=run)
    task.start()
    deadline = time.monotonic() + 180
    while not (running := [a for a in yarn.applications()  # submitted: its driver starts, or runs
                           if a["name"] == "hudi-ops-ingest-trips_killed" and a["state"] in ("ACCEPTED", "RUNNING")]):
        assert time.monotonic() < deadline and task.is_alive(), failure
        time.sleep(0.5)
    op.on_kill()
    task.join(120)
    assert not task.is_alive() and failure
    # the ResourceManager took the kill (on_kill logged it); it moves the application to its end on its own time
    deadline = time.monotonic() + 60
    while (app := _app(yarn, running[0]["id"]))["state"] not in ("KILLED", "FINISHED", "FAILED"):
        assert time.monotonic() < deadline, app
        time.sleep(0.5)
    assert (app["state"], app["finalStatus"]) == ("KILLED", "KILLED")
    assert not (tmp_path / "trips_killed" / ".hoodie").exists() or not read_hudi_rs(tmp_path / "trips_killed")


def test_a_retry_ends_the_application_its_dead_try_left_running_before_it_writes(
    yarn, node_python, zookeeper_connection, spark, tmp_path, capsys
):
    """The worker lost with its task (no on_kill) on an Airflow without a task state store (before 3.3): YARN's
    driver lives on. The next try, tagged as the first was, has YARN kill it before submitting its own.
    (With the store, the retry takes it up instead: test_resumable_yarn.py.)"""
    table, landing = tmp_path / "trips_orphan", tmp_path / "landing"
    seed, rows = trips(DAY1, range(20), ts=1), trips(DAY1, range(10, 30), ts=2)
    write_source(tmp_path / "seed" / "seed.parquet", seed)
    write_source(landing / "a.parquet", rows)
    tries = [writer(HudiIngestOperator, yarn, node_python, table, landing, table_type="COPY_ON_WRITE",
                    hoodie_conf={"hoodie.write.lock.wait_time_ms": "300000"}) for _ in range(2)]
    assert main(trips_args(IngestSpec, table, tmp_path / "seed", table_name=table.name, table_type="COPY_ON_WRITE",
                           hoodie_conf=tries[0].job_options()), spark=spark) == 0
    outcome: dict[int, object] = {}

    def run(n):
        try:
            outcome[n] = tries[n].execute(context("manual__orphan"))
        except AirflowException as e:
            outcome[n] = e

    with HeldLock(tries[0].job_options(), table.name, wait_s=60) as lock:  # the first try waits at its commit
        before = lock.waiting()  # nodes left in line by the seed's in-process writer, if any
        first = threading.Thread(target=run, args=(0,))
        first.start()
        lock.wait_for_waiters(before + 1, timeout_s=300)  # its driver, on YARN, waits in the lock's line
        tries[0]._killed = True  # the worker's death, as the task sees it: it stops following, no on_kill
        first.join(60)
        (orphan,) = [a for a in yarn.applications() if a["applicationTags"] == tries[0]._tag]
        # its driver runs (YARN says ACCEPTED until it has its Spark context: it queued for the lock before)
        assert orphan["state"] in ("ACCEPTED", "RUNNING") and isinstance(outcome[0], AirflowException)
        second = threading.Thread(target=run, args=(1,))
        second.start()
        deadline = time.monotonic() + 120
        while _state(yarn, orphan["id"]) != "KILLED":
            assert time.monotonic() < deadline and second.is_alive(), outcome
            time.sleep(0.5)
    second.join(300)
    assert tries[1]._tag == tries[0]._tag and outcome[1]["outcome"] == "committed", outcome
    assert read_hudi_rs(table) == Model().upsert(seed).upsert(rows).expected() == read_spark(spark, table)


def _app(yarn, app_id):
    return next(a for a in yarn.applications() if a["id"] == app_id)


def _state(yarn, app_id):
    return _app(yarn, app_id)["state"]
