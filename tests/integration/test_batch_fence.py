"""Two attempts of one batch never write it at once: an orphaned attempt beside Airflow's retry, or one
backfill window triggered twice. Each writer is a real spark-submit process; new keys go into a new
partition, where Hudi's OCC alone would let both attempts commit them (apache/hudi#9831). The attempts
are lined up behind the batch's fence, held from here, and released together; every table is judged by
hudi-rs and Spark's Hudi reader against a plain model of the batches."""

from __future__ import annotations

import os
import signal
import subprocess
import time

import pytest
from kazoo.client import KazooClient

from hudi_ops.format.meta_client import MetaClient
from hudi_ops.job_specs import BackfillSpec
from hudi_ops.locks.job_locks import batch_lock
from hudi_ops.read.table_overview import COMPLETED, instant_spans
from hudi_ops.spark.__main__ import main
from hudi_ops.spark.driver_lifetime import TASK_PROCESS_ENV, task_process
from hudi_ops.spark.jobs.batch_fence import backfill_batch, ingest_batch
from hudi_ops.storage import Storage
from tests.integration.lock_options import await_stopped_writes_expired, occ_options
from tests.integration.processes import Job, await_write_in_flight, waiting_to_commit
from tests.integration.test_spark_jobs import TRIPS_TABLE, NoSpark, ingest_args
from tests.tables import Model, job_result, read_hudi_rs, read_spark, trips, write_source

pytestmark = pytest.mark.spark  # spark-submit jobs of its own

OLD, NEW = "2026-11-20", "2026-11-21"
MOR = "MERGE_ON_READ"


class Lake:
    """A MERGE_ON_READ trips table seeded with a day of trips, its writers' options and its model."""

    def __init__(self, tmp_path, spark, capsys, options):
        self.root, self.spark, self.capsys, self.options = tmp_path, spark, capsys, options
        self.table, self.landing, self.history = tmp_path / "trips", tmp_path / "landing", tmp_path / "history"
        self.model = Model()
        self.jobs: list[Job] = []
        seed = trips(OLD, range(20), ts=1)
        write_source(self.landing / "seed.parquet", seed)
        self.model.upsert(seed)
        assert self.here(self.ingest("seed")) == 0, self.last

    def ingest(self, run: str, **fields) -> list[str]:
        return ingest_args(self.table, self.landing, table_type=MOR, hoodie_conf=self.options, run_id=run, **fields)

    def backfill(self, run: str, day: str) -> list[str]:
        return BackfillSpec(base_path=str(self.table), source_path=str(self.history), start=day, end=day, run_id=run,
                            table_type=MOR, hoodie_conf=self.options, **TRIPS_TABLE).to_argv()

    def here(self, argv) -> int:
        """A job in this process, with the shared session."""
        code = main(argv, spark=self.spark)
        self.last = job_result(self.capsys.readouterr().out)
        return code

    def start(self, argv, name: str) -> Job:
        job = Job.start(argv, self.root / f"{name}-{time.monotonic_ns()}.log")
        self.jobs.append(job)
        return job

    def released_together(self, batch: str, attempts: list[list[str]]) -> list[tuple[int, dict]]:
        """Start the attempts while the batch's fence is held here; once all wait for it, let them go."""
        with batch_lock({**self.options, "hoodie.write.lock.wait_time_ms": "60000"}, "trips", batch, 60) as fence:
            jobs = [self.start(argv, f"attempt-{n}") for n, argv in enumerate(attempts)]
            fence.wait_for_waiters(len(jobs), timeout_s=240)
        return [job.finish() for job in jobs]

    def read(self):
        rows = read_hudi_rs(self.table)
        assert rows == read_spark(self.spark, self.table), "hudi-rs and Spark's Hudi reader disagree"
        return rows

    def completed_writes(self) -> list[str]:
        meta = MetaClient.open(self.table)
        return [s.requested_time for s in instant_spans(meta.timeline(), meta.commit_action)
                if s.status == COMPLETED]


@pytest.fixture
def lake(tmp_path, spark, capsys, zookeeper):
    made = Lake(tmp_path, spark, capsys, occ_options(zookeeper.url))
    yield made
    for job in made.jobs:  # a failed test's writers
        if job.process.poll() is None:
            job.kill()


def one_committed_one_already(results):
    """Both attempts end 0: one committed the batch, the other found it committed and wrote nothing."""
    assert [code for code, _ in results] == [0, 0], results
    by_outcome = {r["outcome"]: r for _, r in results}
    assert set(by_outcome) == {"committed", "already committed"}, results
    done, found = by_outcome["committed"], by_outcome["already committed"]
    assert found["instant"] == done["instant"] and found["commits"] == 0 and found["rows"] == 0
    return done


def test_two_attempts_of_one_ingest_released_together_write_its_new_keys_once(lake):
    batch = trips(NEW, range(8), ts=2)
    write_source(lake.landing / "next.parquet", batch)
    before = lake.completed_writes()
    fence = ingest_batch(Storage.for_uri(lake.landing).table_id)
    done = one_committed_one_already(lake.released_together(fence, [lake.ingest("run-7"), lake.ingest("run-7")]))
    assert done["inserts"] == len(batch)
    assert len(lake.completed_writes()) == len(before) + 1  # one commit for the batch
    assert lake.read() == lake.model.upsert(batch).expected()  # each key once


@pytest.mark.long
def test_two_attempts_of_one_backfill_day_released_together_write_its_new_keys_once(lake):
    batch = trips(NEW, range(100, 108), ts=1)
    write_source(lake.history / f"dt={NEW}" / "part-0.parquet", batch)
    attempts = [lake.backfill("manual__1", NEW), lake.backfill("manual__1", NEW)]
    done = one_committed_one_already(lake.released_together(backfill_batch(NEW), attempts))
    assert done["inserts"] == len(batch)
    assert lake.read() == lake.model.upsert(batch).expected()


def test_one_backfill_window_triggered_twice_writes_its_new_keys_once(lake):
    """Two runs of a window each write it (a later run may bring corrections); one after the other, the
    second updates what the first inserted."""
    batch = trips(NEW, range(100, 108), ts=1)
    write_source(lake.history / f"dt={NEW}" / "part-0.parquet", batch)
    attempts = [lake.backfill("manual__a", NEW), lake.backfill("manual__b", NEW)]
    results = lake.released_together(backfill_batch(NEW), attempts)
    assert [(code, r["outcome"]) for code, r in results] == [(0, "committed"), (0, "committed")], results
    assert sorted((r["inserts"], r["updates"]) for _, r in results) == [(0, len(batch)), (len(batch), 0)]
    assert lake.read() == lake.model.upsert(batch).expected()


def test_a_write_whose_fence_was_lost_before_its_commit_fails_and_leaves_nothing(lake, zookeeper):
    """The fence's ZooKeeper session may end while the job writes (an outage past its timeout, a long
    pause), and another attempt may then hold the fence: the job must not commit blind. Hudi takes the
    table's lock to commit, and hudi-ops' lock provider checks the fence there; its node is deleted
    here while the job waits for that lock, as the end of its session would."""
    seeded = lake.model.expected()
    batch = trips(NEW, range(8), ts=2)
    write_source(lake.landing / "next.parquet", batch)
    before = set(lake.completed_writes())
    job = lake.start(lake.ingest("run-9"), "fenced")
    with waiting_to_commit(lake.table, before, job, lake.options):  # done writing, it waits to commit
        fence_path = (f"{lake.options['hoodie.write.lock.zookeeper.base_path']}/"
                      f"{lake.options['hoodie.write.lock.zookeeper.lock_key']}."
                      f"{ingest_batch(Storage.for_uri(lake.landing).table_id)}")
        client = KazooClient(hosts=zookeeper.url)
        client.start(timeout=15)
        try:
            (node,) = client.get_children(fence_path)
            client.delete(f"{fence_path}/{node}")
        finally:
            client.stop()
            client.close()
    code, result = job.finish()
    assert code == 3 and result["error"] == "ConcurrentJobError", result
    assert "hudi-ops fence lost" in result["message"] and "is gone" in result["message"], result
    assert lake.read() == seeded  # nothing of it is visible
    assert set(lake.completed_writes()) == before

    await_stopped_writes_expired(lake.table)
    assert lake.here(lake.ingest("run-9")) == 0, lake.last  # Airflow's retry
    assert lake.last["outcome"] == "committed" and lake.last["inserts"] == len(batch), lake.last
    assert lake.read() == lake.model.upsert(batch).expected()


def test_a_write_whose_task_died_ends_at_once_saying_so_and_leaves_nothing(lake):
    """An orphaned attempt (its Airflow task killed hard) ends itself while it is deep in a call into
    the JVM (here Hudi's commit, waiting for the table's lock): it reports why, in its result file, with
    no Py4J traceback, and nothing of its write is visible; the retry writes the batch once."""
    seeded = lake.model.expected()
    batch = trips(NEW, range(8), ts=2)
    write_source(lake.landing / "next.parquet", batch)
    before = set(lake.completed_writes())
    task = subprocess.Popen(["sleep", "600"])  # the Airflow task process that started spark-submit
    try:
        job = Job.start(lake.ingest("run-4"), lake.root / "orphan.log", env={TASK_PROCESS_ENV: task_process(task.pid)})
        lake.jobs.append(job)
        with waiting_to_commit(lake.table, before, job, lake.options):  # in Hudi's commit, waiting for the lock
            task.kill()
            task.wait()
            code = job.process.wait(timeout=60)
    finally:
        task.kill()
        task.wait()
    result = job.result()
    assert code == 1 and result is not None and result["error"] == "JobEndedError", (code, result)
    assert "Airflow task that started it is gone" in result["message"], result
    log = job.log.read_text()
    assert "Traceback" not in log and "Py4JError" not in log and "reentrant call" not in log, log[-3000:]
    assert lake.read() == seeded and set(lake.completed_writes()) == before

    await_stopped_writes_expired(lake.table)
    assert lake.here(lake.ingest("run-4")) == 0, lake.last  # Airflow's retry
    assert lake.last["outcome"] == "committed" and lake.last["inserts"] == len(batch), lake.last
    assert lake.read() == lake.model.upsert(batch).expected()


def test_on_a_table_without_a_lock_an_attempt_beside_a_write_in_flight_waits_for_it(tmp_path, spark, capsys):
    """A single writer's table has no ZooKeeper: a write in flight with a live heartbeat is another
    attempt at work, and the retry that meets it exits 3 (retried) instead of writing beside it. Hudi
    keeps heartbeats only when failed writes are rolled back lazily, which hudi-ops chooses there too."""
    table = Lake(tmp_path, spark, capsys, {})
    batch = trips(NEW, range(8), ts=2)
    write_source(table.landing / "next.parquet", batch)
    before = set(table.completed_writes())
    orphan = table.start(table.ingest("run-3"), "orphan")
    try:
        await_write_in_flight(table.table, before, orphan)
        os.killpg(orphan.process.pid, signal.SIGSTOP)  # in flight, its heartbeat fresh (it expires after 30 s)
        assert table.here(table.ingest("run-3")) == 3, table.last
        assert table.last["error"] == "ConcurrentJobError" and "in flight" in table.last["message"], table.last
    finally:
        os.killpg(orphan.process.pid, signal.SIGCONT)
    code, result = orphan.finish()
    assert code == 0 and result["outcome"] == "committed", result
    assert table.here(table.ingest("run-3")) == 0  # the retry, once the orphan is done
    assert table.last["outcome"] == "already committed" and table.last["instant"] == result["instant"], table.last
    assert table.read() == table.model.upsert(batch).expected()


def test_an_attempt_that_waited_its_time_for_the_fence_exits_3_before_spark_starts(lake):
    write_source(lake.landing / "next.parquet", trips(NEW, range(8), ts=2))
    fence = ingest_batch(Storage.for_uri(lake.landing).table_id)
    with batch_lock(lake.options, "trips", fence, 60):  # the first attempt, still at work
        assert main(lake.ingest("run-5", wait_seconds=1), spark=NoSpark()) == 3
    result = job_result(lake.capsys.readouterr().out)
    assert result["error"] == "ConcurrentJobError" and "held its fence" in result["message"], result
    assert "--wait-seconds" in result["message"]
