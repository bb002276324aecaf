"""One plan, one executor: executions of the same compaction plan never run at once; a compaction
executes beside a writer that keeps committing.

Two spark-submit processes execute one plan, lined up behind the plan's lock held from Python and
released together (an Airflow retry overlapping a slow attempt, two runs of a services DAG). One runs
the plan, the other waits and reports the first one's outcome; the plan completes exactly once.
"""

from __future__ import annotations

import time

import pytest

from hudi_ops.format.meta_client import MetaClient
from hudi_ops.job_specs import CompactSpec
from hudi_ops.locks.held_lock import HeldLock
from hudi_ops.locks.job_locks import plan_lock
from hudi_ops.spark.__main__ import main
from tests.integration.lock_options import occ_options
from tests.integration.processes import Job
from tests.integration.test_spark_jobs import ingest_args
from tests.tables import Model, job_result, read_hudi_rs, read_spark, tree, trips, write_source

pytestmark = pytest.mark.spark  # spark-submit jobs of its own

DAY1, DAY2 = "2026-11-20", "2026-11-21"
#: a compaction is due after every deltacommit, not Hudi's default of 5
COMPACT_EVERY_COMMIT = {"hoodie.compact.inline.max.delta.commits": "1"}


def mor_table_with_a_plan(root, zookeeper, spark, capsys):
    """A MERGE_ON_READ table with updates in log files and a scheduled compaction plan."""
    table, source = root / "trips", root / "landing"
    options = occ_options(zookeeper.url)
    model = Model()
    for n in range(3):
        rows = trips(DAY1, range(0, 30, 1 if n == 0 else 4), ts=n, fare=float(n)) + trips(DAY2, range(10), ts=n)
        write_source(source / f"{n}.parquet", rows)
        model.upsert(rows)
        code = main(ingest_args(table, source, table_type="MERGE_ON_READ", hoodie_conf=options), spark=spark)
        assert code == 0
    schedule = CompactSpec(base_path=str(table), mode="schedule", hoodie_conf={**COMPACT_EVERY_COMMIT, **options})
    code = main(schedule.to_argv(), spark=spark)
    plan = job_result(capsys.readouterr().out)["instant"]
    assert code == 0 and plan
    return table, options, model, plan


def execute(table, options, **fields):
    """The arguments of a compaction's execution; `fields` are CompactSpec's."""
    return CompactSpec(base_path=str(table), mode="execute", hoodie_conf=options, **fields).to_argv()


def test_two_executions_of_one_plan_started_together_run_it_once(tmp_path, zookeeper, spark, capsys):
    table, options, model, plan = mor_table_with_a_plan(tmp_path, zookeeper, spark, capsys)
    with plan_lock(options, "trips", "compaction", plan, wait_s=10) as held:
        jobs = [Job.start(execute(table, options, instant_time=plan), tmp_path / f"exec-{n}.log")
                for n in range(2)]
        deadline = time.monotonic() + 240
        while len(held.provider.queue()) < 3:  # both executors wait behind us
            assert time.monotonic() < deadline, "the executors never reached the plan's lock"
            assert all(j.process.poll() is None for j in jobs), "an executor ended before the plan's lock"
            time.sleep(0.2)
    results = [job.finish() for job in jobs]
    assert [code for code, _ in results] == [0, 0]
    outcomes = sorted(r["outcome"] for _, r in results)
    assert outcomes == ["completed", "completed by another run"]
    assert {r["instant"] for _, r in results} == {plan}
    assert results[0][1]["files"] == results[1][1]["files"] > 0  # the waiter reports what the runner did

    timeline = MetaClient.open(table).timeline()
    completed = [i for i in timeline.completed if i.requested_time == plan]
    assert [i.action for i in completed] == ["commit"]  # one completion of the plan, no second attempt
    assert not [i for i in timeline.instants if i.action == "rollback"]
    expected = model.expected()
    assert read_hudi_rs(table) == read_spark(spark, table) == expected
    assert read_hudi_rs(table, read_optimized=True) == expected


@pytest.mark.long
def test_an_executor_that_cannot_get_the_plan_in_time_exits_4_and_changes_nothing(tmp_path, zookeeper, spark,
                                                                                   capsys):
    table, options, _, plan = mor_table_with_a_plan(tmp_path, zookeeper, spark, capsys)
    before = tree(table)
    with plan_lock(options, "trips", "compaction", plan, wait_s=10):
        code = main(execute(table, options, wait_seconds=2), spark=spark)
        result = job_result(capsys.readouterr().out)
    assert code == 4 and f"compaction.{plan}" in result["message"]
    assert tree(table) == before
    code = main(execute(table, options), spark=spark)  # released: the same run executes it
    assert code == 0 and job_result(capsys.readouterr().out)["outcome"] == "completed"


def test_an_ingest_commits_under_occ_while_another_process_executes_the_compaction(tmp_path, zookeeper, spark,
                                                                                    capsys):
    """Compaction scheduled by one task, executed by another, while an ingest of updates to the same
    file groups commits: both finish, no row is lost or doubled."""
    table, options, model, plan = mor_table_with_a_plan(tmp_path, zookeeper, spark, capsys)
    source = tmp_path / "landing"
    update = trips(DAY1, range(0, 30, 3), ts=10, fare=10.0) + trips(DAY2, range(5, 15), ts=10)
    write_source(source / "3.parquet", update)
    ingest = ingest_args(table, source, hoodie_conf=options)
    table_lock = HeldLock({**options, "hoodie.write.lock.wait_time_ms": "60000"},
                          options["hoodie.write.lock.zookeeper.lock_key"])
    with table_lock as held:  # the ingest waits to start its instant, the compaction to commit
        jobs = [Job.start(execute(table, options), tmp_path / "compact.log"),
                Job.start(ingest, tmp_path / "ingest.log")]
        held.wait_for_waiters(2, timeout_s=240)
    (compact_code, compacted), (ingest_code, ingested) = [job.finish() for job in jobs]
    assert (compact_code, compacted["outcome"], compacted["instant"]) == (0, "completed", plan), \
        compacted.get("message")
    assert ingest_code == 0, ingested.get("message")
    assert (ingested["updates"], ingested["inserts"]) == (15, 5)  # day 2 had keys 0-9
    expected = model.upsert(update).expected()
    assert read_hudi_rs(table) == read_spark(spark, table) == expected

    code = main(CompactSpec(base_path=str(table), hoodie_conf={**COMPACT_EVERY_COMMIT, **options}).to_argv(),
                spark=spark)
    assert code == 0 and job_result(capsys.readouterr().out)["outcome"] == "completed"
    assert read_hudi_rs(table, read_optimized=True) == read_hudi_rs(table) == expected
