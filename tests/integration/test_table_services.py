"""The table-service jobs (`compact`, `cluster`, `clean`) on Hudi's write client, in this process with
the shared session. Tables are judged by hudi-rs and Spark's Hudi reader against the model."""

from __future__ import annotations

import pytest

from hudi_ops.format.meta_client import MetaClient
from hudi_ops.read.pending_plans import pending_plans
from tests.integration.test_spark_jobs import NoSpark, ingest_args, run
from tests.tables import Model, read_hudi_rs, read_spark, tree, trips, write_source

DAY1, DAY2 = "2026-11-20", "2026-11-21"
COMPACT_EVERY_COMMIT = ("--hoodie-conf", "hoodie.compact.inline.max.delta.commits=1")


def updated_mor_table(spark, capsys, tmp_path, rounds=3):
    """A MERGE_ON_READ table after an insert and `rounds - 1` update runs (log files), and its model."""
    table, source = tmp_path / "trips", tmp_path / "landing"
    model = Model()
    for n in range(rounds):
        rows = trips(DAY1, range(0, 20, 1 if n == 0 else 3), ts=n, fare=float(n)) + trips(DAY2, range(10), ts=n)
        write_source(source / f"{n}.parquet", rows)
        code, _ = run(capsys, ingest_args(table, source, "--table-type", "MERGE_ON_READ"), spark)
        assert code == 0
        model.upsert(rows)
    return table, source, model


def file_groups(table, partition):
    """The live file groups of a partition (replaced ones excluded), as the control plane lists them."""
    return [g for g in MetaClient.open(table).fs_view().file_groups() if g.id.partition_path == partition]


def service(job, table, *flags):
    return [job, "--base-path", str(table), *flags]


def test_compaction_scheduled_by_one_run_and_executed_by_another_keeps_every_row(spark, tmp_path, capsys):
    table, _, model = updated_mor_table(spark, capsys, tmp_path)
    code, scheduled = run(capsys, service("compact", table, "--mode", "schedule", *COMPACT_EVERY_COMMIT), spark)
    assert code == 0 and scheduled["outcome"] == "scheduled" and scheduled["file_groups"] >= 2
    plan = scheduled["instant"]
    # the control plane sees the plan Hudi wrote, without a JVM
    assert [p.instant for p in pending_plans(MetaClient.open(table).timeline(), "compaction")] == [plan]

    code, executed = run(capsys, service("compact", table, "--mode", "execute"), spark)
    assert code == 0 and (executed["instant"], executed["outcome"]) == (plan, "completed")
    assert executed["files"] == scheduled["file_groups"] and executed["rows"] == 30
    timeline = MetaClient.open(table).timeline()
    assert timeline.completed_instant(plan).action == "commit" and not pending_plans(timeline, "compaction")
    expected = model.expected()
    assert read_hudi_rs(table) == read_spark(spark, table) == expected
    assert read_hudi_rs(table, read_optimized=True) == expected  # the base files alone now hold every row


def test_executing_a_completed_plan_again_reports_it_and_changes_nothing(spark, tmp_path, capsys):
    table, _, _ = updated_mor_table(spark, capsys, tmp_path, rounds=2)
    code, done = run(capsys, service("compact", table, *COMPACT_EVERY_COMMIT), spark)
    assert code == 0 and done["outcome"] == "completed" and done["mode"] == "scheduleAndExecute"
    before = tree(table)
    code, again = run(capsys, service("compact", table, "--mode", "execute", "--instant-time", done["instant"]),
                      NoSpark())
    assert code == 0 and again["outcome"] == "already completed" and again["files"] == done["files"]
    assert tree(table) == before


def test_execute_without_a_pending_plan_does_nothing_and_starts_no_spark(spark, tmp_path, capsys):
    table, _, _ = updated_mor_table(spark, capsys, tmp_path, rounds=1)
    code, result = run(capsys, service("compact", table, "--mode", "execute"), NoSpark())
    assert code == 0 and result["instant"] is None and result["reason"] == "no pending compaction plan"


def test_nothing_to_compact_schedules_nothing(spark, tmp_path, capsys):
    table, _, _ = updated_mor_table(spark, capsys, tmp_path, rounds=1)
    before = tree(table / ".hoodie" / "timeline")
    code, result = run(capsys, service("compact", table, "--mode", "schedule"), spark)  # 1 deltacommit < 5 due
    assert code == 0 and result["instant"] is None and "nothing to plan" in result["reason"]
    assert {k for k in tree(table / ".hoodie" / "timeline") if not k.startswith("history")} == \
        {k for k in before if not k.startswith("history")}


@pytest.mark.parametrize(("argv", "named"), [
    (["--mode", "execute", "--instant-time", "20200101000000000"], "no pending compaction plan 20200101000000000"),
    (["--mode", "sometimes"], "--mode"),
])
def test_bad_service_input_exits_2_naming_it(spark, tmp_path, capsys, argv, named):
    table, _, _ = updated_mor_table(spark, capsys, tmp_path, rounds=1)
    before = tree(table)
    code, result = run(capsys, service("compact", table, *argv), NoSpark())
    assert code == 2 and named in result["message"]
    assert tree(table) == before


def test_compaction_of_a_copy_on_write_table_is_refused_with_the_fix(spark, tmp_path, capsys):
    table, source = tmp_path / "cow", tmp_path / "landing"
    write_source(source / "a.parquet", trips(DAY1, range(5), ts=1))
    assert run(capsys, ingest_args(table, source), spark)[0] == 0
    code, result = run(capsys, service("compact", table), NoSpark())
    assert code == 2 and "COPY_ON_WRITE" in result["message"] and "clustering" in result["message"]


def test_a_service_on_a_path_that_is_no_table_exits_2(tmp_path, capsys):
    code, result = run(capsys, service("clean", tmp_path / "nothing"), NoSpark())
    assert code == 2 and "nothing" in result["message"]


def test_clustering_rewrites_small_files_into_few_and_keeps_the_rows(spark, tmp_path, capsys):
    table, source = tmp_path / "trips", tmp_path / "landing"
    model = Model()
    for n in range(12):  # twelve inserts of new keys: twelve small files in the partition
        rows = trips(DAY1, range(n * 10, n * 10 + 10), ts=1)
        write_source(source / f"{n:02d}.parquet", rows)
        code, _ = run(capsys, ingest_args(table, source, "--op", "INSERT", "--hoodie-conf",
                                          "hoodie.parquet.small.file.limit=0"), spark)
        assert code == 0
        model.upsert(rows)
    assert len(file_groups(table, DAY1)) == 12
    code, result = run(capsys, service("cluster", table, "--hoodie-conf",
                                       "hoodie.clustering.plan.strategy.max.num.groups=1"), spark)
    assert code == 0, result.get("message")
    assert result["outcome"] == "completed" and result["file_groups"] == 12
    meta = MetaClient.open(table)
    assert meta.timeline().completed_instant(result["instant"]).action == "replacecommit"
    assert len(file_groups(table, DAY1)) <= 2
    assert read_hudi_rs(table) == read_spark(spark, table) == model.expected()


def test_clean_dry_run_reports_what_the_clean_then_removes(spark, tmp_path, capsys):
    table, source = tmp_path / "trips", tmp_path / "landing"
    model = Model()
    for n in range(4):  # four versions of one file group
        rows = trips(DAY1, range(10), ts=n, fare=float(n))
        write_source(source / f"{n}.parquet", rows)
        assert run(capsys, ingest_args(table, source, "--hoodie-conf", "hoodie.clean.automatic=false"), spark)[0] == 0
        model.upsert(rows)
    one_version = ("--hoodie-conf", "hoodie.cleaner.policy=KEEP_LATEST_FILE_VERSIONS",
                   "--hoodie-conf", "hoodie.cleaner.fileversions.retained=1")
    before = tree(table)
    code, planned = run(capsys, service("clean", table, "--dry-run", *one_version), spark)
    assert code == 0 and planned["outcome"] == "planned" and planned["files"] == 3
    assert tree(table) == before  # a dry run writes nothing, not even a plan
    old = set(planned["details"]["files"])
    assert planned["bytes"] == sum(before[f][0] for f in old)

    code, cleaned = run(capsys, service("clean", table, *one_version), spark)
    assert code == 0 and cleaned["outcome"] == "completed"
    assert (cleaned["files"], cleaned["bytes"], set(cleaned["details"]["files"])) == \
        (planned["files"], planned["bytes"], old)
    after = tree(table)
    assert not old & set(after) and MetaClient.open(table).timeline().completed_instant(cleaned["instant"])
    assert read_hudi_rs(table) == read_spark(spark, table) == model.expected()


def test_an_unknown_clean_policy_is_refused_naming_hudis_policies(tmp_path, capsys, spark):
    table, source = tmp_path / "cow", tmp_path / "landing"
    write_source(source / "a.parquet", trips(DAY1, range(5), ts=1))
    assert run(capsys, ingest_args(table, source), spark)[0] == 0
    code, result = run(capsys, service("clean", table, "--hoodie-conf", "hoodie.cleaner.policy=KEEP_NOTHING"),
                       NoSpark())
    assert code == 2 and "KEEP_LATEST_FILE_VERSIONS" in result["message"]
