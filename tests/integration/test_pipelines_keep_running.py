"""What a chaos run of concurrent pipelines found stopping them, each fixed and pinned here:

- a backfill of `dt=` folders no longer adds a `dt` column that the steady ingest's files lack;
- two processes rolling back one failed write take turns instead of failing each other;
- a cleaner leaves alone a write that is between its requested instant and its first heartbeat;
- a first writer that died while Hudi created the table is cleared by the next (under the creation lock);
- two first writers of a new table: the second waits for the table instead of failing.

Tables are judged by hudi-rs and Spark's Hudi reader against the plain model.
"""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pyarrow as pa
import pytest

from hudi_ops.errors import EXIT_CONFLICT, EXIT_FAILED
from hudi_ops.format.instant import Action
from hudi_ops.format.meta_client import MetaClient
from hudi_ops.job_specs import BackfillSpec, CleanSpec, IngestSpec, RollbackFailedSpec
from hudi_ops.locks.job_locks import cleaner_lock, creation_lock
from hudi_ops.read.table_overview import ROLLED_BACK, instant_spans
from hudi_ops.spark.__main__ import main
from hudi_ops.spark.jobs.table_creation import DEAD_CREATION_AGE_S, TableCreation
from tests.integration.lock_options import await_stopped_writes_expired, occ_options
from tests.integration.processes import Job
from tests.integration.test_spark_jobs import NoSpark, failed_write, ingest_args, run, trips_args
from tests.tables import Model, job_result, read_hudi_rs, read_spark, trips, write_source

pytestmark = pytest.mark.spark  # spark-submit jobs of its own

DAY1, DAY2 = "2026-11-20", "2026-11-21"
#: trips without `dt`, partitioned by city: the landing files' schema, and the history's
CITY_TRIPS = pa.schema([("trip_id", pa.string()), ("city", pa.string()), ("ts", pa.int64()), ("fare", pa.float64())])
CITY_COLUMNS = tuple(CITY_TRIPS.names)


def city_trips(prefix, ids, *, ts, city="sf"):
    return [{"trip_id": f"{prefix}-{i:04d}", "city": city, "ts": ts, "fare": float(i + ts)} for i in ids]


def spans(table):
    meta = MetaClient.open(table)
    return {s.requested_time: s for s in instant_spans(meta.timeline(), meta.commit_action)}


def test_a_backfill_of_day_folders_adds_no_column_and_the_ingest_runs_on(spark, tmp_path, capsys):
    table, landing, history = tmp_path / "trips", tmp_path / "landing", tmp_path / "history"
    city_table = {"base_path": str(table), "table_name": "trips", "record_key_field": "trip_id",
                  "partition_path_field": "city", "ordering_field": "ts"}
    model = Model()
    first = city_trips("live", range(10), ts=1)
    write_source(landing / "a.parquet", first, CITY_TRIPS)
    assert run(capsys, IngestSpec(**city_table, source_path=str(landing)).to_argv(), spark)[0] == 0
    model.upsert(first)

    old = {day: city_trips(day, range(5), ts=1, city=city) for day, city in ((DAY1, "sf"), (DAY2, "nyc"))}
    for day, rows in old.items():  # the day is in the folder's name only
        write_source(history / f"dt={day}" / "part-0.parquet", rows, CITY_TRIPS)
    backfill = BackfillSpec(**city_table, source_path=str(history), start=DAY1, end=DAY2)
    code, result = run(capsys, backfill.to_argv(), spark)
    assert code == 0 and result["commits"] == 2, result
    model.upsert(old[DAY1]).upsert(old[DAY2])
    assert "dt" not in MetaClient.open(table).table_schema().names  # the folder selected the day, no more

    later = city_trips("live", range(5, 15), ts=2)
    write_source(landing / "b.parquet", later, CITY_TRIPS)  # the landing schema, unchanged
    code, result = run(capsys, IngestSpec(**city_table, source_path=str(landing)).to_argv(), spark)
    assert code == 0 and (result["updates"], result["inserts"]) == (5, 5), result
    model.upsert(later)
    assert read_hudi_rs(table, CITY_COLUMNS) == read_spark(spark, table, CITY_COLUMNS) == model.expected(CITY_COLUMNS)


@pytest.mark.long
def test_two_processes_rolling_back_one_failed_write_both_succeed(spark, tmp_path, capsys, zookeeper):
    options = occ_options(zookeeper.url)
    table, failed, model = failed_write(spark, capsys, tmp_path, options)
    await_stopped_writes_expired(table)
    jobs = []
    # both reach the cleaner's lock before either rolls anything back: they overlap for certain
    with cleaner_lock(options, "trips", wait_s=30) as lock:
        for name, job in (("clean", CleanSpec), ("rollback", RollbackFailedSpec)):
            jobs.append(Job.start(job(base_path=str(table), hoodie_conf=options).to_argv(), tmp_path / f"{name}.log"))
        lock.wait_for_waiters(2, timeout_s=240)
    (clean_code, clean), (rollback_code, rollback) = (job.finish() for job in jobs)
    assert (clean_code, rollback_code) == (0, 0), (clean, rollback)
    rolled = (rollback.get("details") or {}).get("rolled_back", [])
    cleaned_first = not rolled  # whoever came second found nothing left to roll back
    assert rolled == ([] if cleaned_first else [failed])
    if cleaned_first:
        assert rollback["reason"] == "no pending write: another process rolled them back"
    assert spans(table)[failed].status == ROLLED_BACK
    rollbacks = [i for i in MetaClient.open(table).timeline().completed if i.action == Action.ROLLBACK]
    assert len(rollbacks) == 1  # one rollback of the failed write, not two
    assert read_hudi_rs(table) == read_spark(spark, table) == model.expected()


#: a heartbeat expiry (3 s x 4) far longer than a clean in the shared session takes to reach its rollback
SLOW_HEARTBEAT = {"hoodie.client.heartbeat.interval_in_ms": "3000", "hoodie.client.heartbeat.tolerable.misses": "4"}
SLOW_EXPIRY_S = (int(SLOW_HEARTBEAT["hoodie.client.heartbeat.interval_in_ms"]) / 1000
                 * int(SLOW_HEARTBEAT["hoodie.client.heartbeat.tolerable.misses"]))


def clean_args(table, options):
    return CleanSpec(base_path=str(table), hoodie_conf=options).to_argv()


def starting_write(spark, capsys, table, source, options) -> str:
    """A table with one commit, then a write's requested instant and no heartbeat: a writer that has
    requested its instant and not beaten yet, which Hudi's LAZY rollback takes for an expired one."""
    write_source(source / "a.parquet", trips(DAY1, range(10), ts=1))
    assert run(capsys, ingest_args(table, source, hoodie_conf=options), spark)[0] == 0
    timeline = MetaClient.open(table).timeline()
    newest = max(i.requested_time for i in timeline)
    starting = time.strftime('%Y%m%d%H%M%S', time.localtime()) + '999'
    assert starting > newest
    (table / ".hoodie" / timeline.folder.rsplit("/", 1)[-1] / f"{starting}.commit.requested").write_bytes(b"")
    assert MetaClient.open(table).timeline().pending[-1].requested_time == starting
    return starting


def test_a_cleaner_leaves_a_write_alone_that_beats_for_the_first_time_late_in_its_expiry(
        spark, tmp_path, capsys, zookeeper):
    table, source = tmp_path / "trips", tmp_path / "landing"
    options = {**occ_options(zookeeper.url), **SLOW_HEARTBEAT}
    starting = starting_write(spark, capsys, table, source, options)

    heartbeat = table / ".hoodie" / ".heartbeat" / starting
    done: list[int] = []
    cleaner = threading.Thread(target=lambda: done.append(main(clean_args(table, options), spark=spark)))
    cleaner.start()
    # Half the expiry without a beat: a clean that did not wait would have rolled the write back by now
    time.sleep(SLOW_EXPIRY_S / 2)
    assert starting in {i.requested_time for i in MetaClient.open(table).timeline().pending}
    heartbeat.parent.mkdir(exist_ok=True)
    while cleaner.is_alive():  # the writer's first beat, then one every 300 ms
        heartbeat.write_bytes(b"")
        time.sleep(0.3)
    cleaner.join()
    assert done == [0], job_result(capsys.readouterr().out)
    assert starting in {i.requested_time for i in MetaClient.open(table).timeline().pending}  # left alone

    time.sleep(SLOW_EXPIRY_S)  # the writer stopped beating: now it has failed
    assert main(clean_args(table, options), spark=spark) == 0
    capsys.readouterr()
    assert starting not in {i.requested_time for i in MetaClient.open(table).timeline().pending}
    assert spans(table)[starting].status == ROLLED_BACK


def test_a_write_that_never_beats_is_rolled_back_only_once_its_expiry_has_passed(spark, tmp_path, capsys, zookeeper):
    table, source = tmp_path / "trips", tmp_path / "landing"
    options = {**occ_options(zookeeper.url), **SLOW_HEARTBEAT}
    starting = starting_write(spark, capsys, table, source, options)
    requested = (table / ".hoodie" / "timeline" / f"{starting}.commit.requested").stat().st_mtime
    assert main(clean_args(table, options), spark=spark) == 0
    capsys.readouterr()
    finished = time.time()
    assert spans(table)[starting].status == ROLLED_BACK
    assert finished - requested >= SLOW_EXPIRY_S  # the clean waited out the write's expiry before rolling it back


def half_created(table: Path, *, age_s: float, instant: str | None = None) -> None:
    """What Hudi leaves when killed after its first folders and before hoodie.properties, `age_s` old."""
    for folder in (".hoodie/.aux/.bootstrap", ".hoodie/.schema", ".hoodie/timeline/history"):
        (table / folder).mkdir(parents=True)
    if instant:
        (table / ".hoodie" / "timeline" / f"{instant}.commit.requested").write_bytes(b"")
    then = time.time() - age_s
    for path in (table / ".hoodie", *(table / ".hoodie").rglob("*")):
        os.utime(path, (then, then))


def test_a_first_writer_that_died_while_hudi_created_the_table_does_not_stop_the_next(
        spark, tmp_path, capsys, zookeeper):
    table, source = tmp_path / "trips", tmp_path / "landing"
    options = occ_options(zookeeper.url)
    half_created(table, age_s=2 * DEAD_CREATION_AGE_S)
    batch = trips(DAY1, range(10), ts=1)
    write_source(source / "a.parquet", batch)
    code, result = run(capsys, ingest_args(table, source, hoodie_conf=options), spark)
    assert (code, result["inserts"]) == (0, 10), result
    assert read_hudi_rs(table) == read_spark(spark, table) == Model().upsert(batch).expected()


def test_a_half_created_table_is_left_alone_while_fresh_or_when_it_holds_instants(tmp_path, capsys, zookeeper):
    options = occ_options(zookeeper.url)
    write_source(tmp_path / "landing" / "a.parquet", trips(DAY1, range(3), ts=1))
    fresh, broken = tmp_path / "fresh", tmp_path / "broken"
    half_created(fresh, age_s=1)  # a creator that takes no lock may be at work: retry later
    code, result = run(capsys, ingest_args(fresh, tmp_path / "landing", hoodie_conf=options), NoSpark())
    assert code == EXIT_CONFLICT and "another writer may be creating the table" in result["message"], result
    half_created(broken, age_s=2 * DEAD_CREATION_AGE_S, instant="20261120101010101")  # a commit may be there
    code, result = run(capsys, ingest_args(broken, tmp_path / "landing", hoodie_conf=options), NoSpark())
    assert code == EXIT_FAILED and "has instants" in result["message"], result
    for table in (fresh, broken):
        assert (table / ".hoodie" / ".schema").is_dir()  # nothing removed


def test_a_writer_waits_for_the_first_commit_of_a_table_whose_creator_is_at_work(spark, tmp_path, capsys, zookeeper):
    """hoodie.properties is written as the first write starts: until that write commits, a second writer
    waits at the creation lock (a chaos run's Kafka ingest, let through once the properties were there,
    wrote with its own column order and Hudi refused one of them at commit)."""
    table, landing = tmp_path / "trips", tmp_path / "landing"
    options = occ_options(zookeeper.url)
    bad = trips(DAY1, range(2), ts=1)
    write_source(landing / "a.parquet", [*bad, {**bad[0], "trip_id": None}])  # a first write that fails midway
    assert run(capsys, ingest_args(table, landing, hoodie_conf=options), spark)[0] == 2
    meta = MetaClient.open(table)  # the table's properties, and no commit
    assert not meta.timeline().completed and meta.timeline().pending
    entered = threading.Event()

    def second_writer() -> None:
        with TableCreation(str(table), options, "trips"):
            entered.set()

    with creation_lock(options, "trips", wait_s=30) as lock:  # a creator at work holds it
        waiting = threading.Thread(target=second_writer)
        waiting.start()
        lock.wait_for_waiters(1, timeout_s=30)
        assert not entered.is_set()
    waiting.join(timeout=30)
    assert entered.is_set()  # let through once the creator is done (here: it died before committing)
    (landing / "a.parquet").unlink()
    good = trips(DAY1, range(3), ts=2)
    write_source(landing / "b.parquet", good)
    code, result = run(capsys, ingest_args(table, landing, hoodie_conf=options), spark)
    assert code == 0 and result["outcome"] == "committed", result
    assert read_hudi_rs(table) == Model().upsert(good).expected()


def test_two_first_writers_of_a_new_table_both_commit(spark, tmp_path, zookeeper):
    table, landing, history = tmp_path / "trips", tmp_path / "landing", tmp_path / "history"
    options = occ_options(zookeeper.url)
    live, old = trips(DAY2, range(10), ts=2), trips(DAY1, range(10), ts=1)
    write_source(landing / "a.parquet", live)
    write_source(history / f"dt={DAY1}" / "part-0.parquet", old)
    backfill = trips_args(BackfillSpec, table, history, start=DAY1, end=DAY1, hoodie_conf=options)
    ingest = ingest_args(table, landing, hoodie_conf=options)
    # both find no table and line up to create it; released together, one creates it, the other waits
    with creation_lock(options, "trips", wait_s=30) as lock:
        jobs = [Job.start(args, tmp_path / f"{args[0]}.log") for args in (backfill, ingest)]
        lock.wait_for_waiters(2, timeout_s=240)
    results = [job.finish() for job in jobs]
    assert [code for code, _ in results] == [0, 0], results
    assert sorted(r["inserts"] for _, r in results) == [10, 10]
    assert read_hudi_rs(table) == read_spark(spark, table) == Model().upsert(live).upsert(old).expected()
