"""The table-service jobs (`compact`, `cluster`, `clean`) on Hudi's write client, in this process with
the shared session. Tables are judged by hudi-rs and Spark's Hudi reader against the model."""

from __future__ import annotations

import json

import pytest

from hudi_ops.cli import main as cli_main
from hudi_ops.format.meta_client import MetaClient
from hudi_ops.job_specs import (
    ArchiveSpec,
    CleanSpec,
    ClusterSpec,
    CompactSpec,
    RestoreSpec,
    RollbackFailedSpec,
    SavepointSpec,
    ServiceSpec,
)
from hudi_ops.options.keys import WriteConfig
from hudi_ops.options.occ import NON_BLOCKING
from hudi_ops.read.clean_planner import REPLACED, next_clean
from hudi_ops.read.pending_plans import pending_plans
from hudi_ops.read.service_work import (
    archive_work,
    clean_work,
    clustering_schedule_work,
    compaction_schedule_work,
    plan_execution_work,
)
from hudi_ops.read.table_overview import ROLLED_BACK, instant_spans
from tests.integration.lock_options import HEARTBEAT, as_flags, await_stopped_writes_expired, occ_options
from tests.integration.test_spark_jobs import NoSpark, failed_write, ingest_args, run
from tests.tables import Model, read_hudi_rs, read_spark, tree, trips, write_source

DAY1, DAY2 = "2026-11-20", "2026-11-21"
COMPACT_EVERY_COMMIT = {"hoodie.compact.inline.max.delta.commits": "1"}
#: the cleaner keeping one version of each file group
ONE_VERSION = {"hoodie.cleaner.policy": "KEEP_LATEST_FILE_VERSIONS", "hoodie.cleaner.fileversions.retained": "1"}


def updated_mor_table(spark, capsys, tmp_path, rounds=3):
    """A MERGE_ON_READ table after an insert and `rounds - 1` update runs (log files), and its model."""
    table, source = tmp_path / "trips", tmp_path / "landing"
    model = Model()
    for n in range(rounds):
        rows = trips(DAY1, range(0, 20, 1 if n == 0 else 3), ts=n, fare=float(n)) + trips(DAY2, range(10), ts=n)
        write_source(source / f"{n}.parquet", rows)
        code, _ = run(capsys, ingest_args(table, source, table_type="MERGE_ON_READ"), spark)
        assert code == 0
        model.upsert(rows)
    return table, source, model


def file_groups(table, partition):
    """The live file groups of a partition (replaced ones excluded), as the control plane lists them."""
    return [g for g in MetaClient.open(table).fs_view().file_groups() if g.id.partition_path == partition]


def cli_json(capsys, command, table):
    assert cli_main([command, str(table), "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def service(job: type[ServiceSpec], table, **fields):
    """The arguments of the table service `job` on `table`; `fields` are its spec's."""
    return job(base_path=str(table), **fields).to_argv()


def test_compaction_scheduled_by_one_run_and_executed_by_another_keeps_every_row(spark, tmp_path, capsys):
    table, _, model = updated_mor_table(spark, capsys, tmp_path)
    meta = MetaClient.open(table)
    due = compaction_schedule_work(meta, COMPACT_EVERY_COMMIT)
    assert due.due and due.reason.startswith("3 deltacommit(s) since the last compaction")
    assert not plan_execution_work(meta, "compaction").due
    code, scheduled = run(capsys, service(CompactSpec, table, mode="schedule", hoodie_conf=COMPACT_EVERY_COMMIT), spark)
    assert code == 0 and scheduled["outcome"] == "scheduled" and scheduled["file_groups"] >= 2
    plan = scheduled["instant"]
    # the control plane sees the plan Hudi wrote, without a JVM
    assert [p.instant for p in pending_plans(MetaClient.open(table).timeline(), "compaction")] == [plan]
    assert plan_execution_work(meta.reload(), "compaction").due  # a MetaClient is one look: look again
    (shown,) = cli_json(capsys, "plans", table)
    assert (shown["service"], shown["instant"], shown["state"], len(shown["file_groups"])) == \
        ("compaction", plan, "REQUESTED", scheduled["file_groups"])

    code, executed = run(capsys, service(CompactSpec, table, mode="execute"), spark)
    assert code == 0 and (executed["instant"], executed["outcome"]) == (plan, "completed")
    assert executed["files"] == scheduled["file_groups"] and executed["rows"] == 30
    timeline = MetaClient.open(table).timeline()
    assert timeline.completed_instant(plan).action == "commit" and not pending_plans(timeline, "compaction")
    assert not compaction_schedule_work(meta.reload(), COMPACT_EVERY_COMMIT).due
    expected = model.expected()
    assert read_hudi_rs(table) == read_spark(spark, table) == expected
    assert read_hudi_rs(table, read_optimized=True) == expected  # the base files alone now hold every row


def test_executing_a_completed_plan_again_reports_it_and_changes_nothing(spark, tmp_path, capsys):
    table, _, _ = updated_mor_table(spark, capsys, tmp_path, rounds=2)
    code, done = run(capsys, service(CompactSpec, table, hoodie_conf=COMPACT_EVERY_COMMIT), spark)
    assert code == 0 and done["outcome"] == "completed" and done["mode"] == "scheduleAndExecute"
    before = tree(table)
    code, again = run(capsys, service(CompactSpec, table, mode="execute", instant_time=done["instant"]), NoSpark())
    assert code == 0 and again["outcome"] == "already completed" and again["files"] == done["files"]
    assert tree(table) == before


def test_execute_without_a_pending_plan_does_nothing_and_starts_no_spark(spark, tmp_path, capsys):
    table, _, _ = updated_mor_table(spark, capsys, tmp_path, rounds=1)
    code, result = run(capsys, service(CompactSpec, table, mode="execute"), NoSpark())
    assert code == 0 and result["instant"] is None and result["reason"] == "no pending compaction plan"


def test_nothing_to_compact_schedules_nothing(spark, tmp_path, capsys):
    table, _, _ = updated_mor_table(spark, capsys, tmp_path, rounds=1)
    assert not compaction_schedule_work(MetaClient.open(table), {}).due  # the check agrees with Hudi
    before = tree(table / ".hoodie" / "timeline")
    code, result = run(capsys, service(CompactSpec, table, mode="schedule"), spark)  # 1 deltacommit < 5 due
    assert code == 0 and result["instant"] is None and "nothing to plan" in result["reason"]
    assert {k for k in tree(table / ".hoodie" / "timeline") if not k.startswith("history")} == \
        {k for k in before if not k.startswith("history")}


@pytest.mark.parametrize(("given", "named"), [
    ({"mode": "execute", "instant_time": "20200101000000000"}, "no pending compaction plan 20200101000000000"),
    (["--mode", "sometimes"], "--mode"),  # raw flags: CompactSpec itself refuses the mode, and the job must too
])
def test_bad_service_input_exits_2_naming_it(spark, tmp_path, capsys, given, named):
    table, _, _ = updated_mor_table(spark, capsys, tmp_path, rounds=1)
    before = tree(table)
    argv = service(CompactSpec, table, **given) if isinstance(given, dict) else [*service(CompactSpec, table), *given]
    code, result = run(capsys, argv, NoSpark())
    assert code == 2 and named in result["message"]
    assert tree(table) == before


def test_compaction_of_a_copy_on_write_table_is_refused_with_the_fix(spark, tmp_path, capsys):
    table, source = tmp_path / "cow", tmp_path / "landing"
    write_source(source / "a.parquet", trips(DAY1, range(5), ts=1))
    assert run(capsys, ingest_args(table, source), spark)[0] == 0
    code, result = run(capsys, service(CompactSpec, table), NoSpark())
    assert code == 2 and "COPY_ON_WRITE" in result["message"] and "clustering" in result["message"]


def test_a_service_on_a_path_that_is_no_table_exits_2(tmp_path, capsys):
    code, result = run(capsys, service(CleanSpec, tmp_path / "nothing"), NoSpark())
    assert code == 2 and "nothing" in result["message"]


def test_clustering_rewrites_40_small_files_into_at_most_4_and_keeps_the_rows(spark, tmp_path, capsys):
    table, source = tmp_path / "trips", tmp_path / "landing"
    model = Model()
    # an insert of 400 new keys split into files of 10 rows: 40 small files in the partition
    small_files = {"hoodie.parquet.small.file.limit": "0", "hoodie.copyonwrite.insert.auto.split": "false",
                   "hoodie.copyonwrite.insert.split.size": "10"}
    rows = trips(DAY1, range(400), ts=1)
    write_source(source / "00.parquet", rows)
    code, _ = run(capsys, ingest_args(table, source, operation="INSERT", hoodie_conf=small_files), spark)
    assert code == 0
    model.upsert(rows)
    assert len(file_groups(table, DAY1)) == 40
    assert clustering_schedule_work(MetaClient.open(table), {}).due
    code, result = run(capsys, service(ClusterSpec, table), spark)
    assert code == 0, result.get("message")
    assert result["outcome"] == "completed" and result["file_groups"] == 40
    meta = MetaClient.open(table)
    assert meta.timeline().completed_instant(result["instant"]).action == "replacecommit"
    assert 1 <= len(file_groups(table, DAY1)) <= 4
    # the check agrees with Hudi's planner: nothing was written since the clustering
    for single_group in ("true", "false"):
        conf = {"hoodie.clustering.plan.strategy.single.group.clustering.enabled": single_group}
        work = clustering_schedule_work(MetaClient.open(table), conf)
        code, again = run(capsys, service(ClusterSpec, table, mode="schedule", hoodie_conf=conf), spark)
        assert code == 0 and not work.due and again["instant"] is None, (single_group, work.reason)
    assert read_hudi_rs(table) == read_spark(spark, table) == model.expected()
    # the 40 replaced files go with the first clean whose retained commits all came after the clustering
    rows = trips(DAY2, range(5), ts=1)
    write_source(source / "later.parquet", rows)
    assert run(capsys, ingest_args(table, source, hoodie_conf={"hoodie.clean.automatic": "false"}), spark)[0] == 0
    retain_one = {"hoodie.cleaner.commits.retained": "1"}
    expected = next_clean(MetaClient.open(table), retain_one)
    assert len(expected.files) == 40 and {s.why for s in expected.slices} == {REPLACED}
    code, cleaned = run(capsys, service(CleanSpec, table, hoodie_conf=retain_one), spark)
    assert code == 0 and set(cleaned["details"]["files"]) == set(expected.files)
    assert read_hudi_rs(table) == read_spark(spark, table) == model.upsert(rows).expected()


def test_clean_dry_run_reports_what_the_clean_then_removes(spark, tmp_path, capsys):
    table, source = tmp_path / "trips", tmp_path / "landing"
    model = Model()
    for n in range(4):  # four versions of one file group
        rows = trips(DAY1, range(10), ts=n, fare=float(n))
        write_source(source / f"{n}.parquet", rows)
        assert run(capsys, ingest_args(table, source, hoodie_conf={"hoodie.clean.automatic": "false"}), spark)[0] == 0
        model.upsert(rows)
    meta = MetaClient.open(table)
    assert not clean_work(meta, {}).due  # KEEP_LATEST_COMMITS keeps 10 commits: all four
    assert clean_work(meta, ONE_VERSION).due
    before = tree(table)
    code, planned = run(capsys, service(CleanSpec, table, dry_run=True, hoodie_conf=ONE_VERSION), spark)
    assert code == 0 and planned["outcome"] == "planned" and planned["files"] == 3
    assert tree(table) == before  # a dry run writes nothing, not even a plan
    old = set(planned["details"]["files"])
    assert planned["bytes"] == sum(before[f][0] for f in old)
    model_plan = next_clean(meta, ONE_VERSION)  # the control plane's model
    assert (set(model_plan.files), model_plan.bytes) == (old, planned["bytes"])
    assert cli_main(["cleans", str(table), "--next", "--json", *as_flags(ONE_VERSION)]) == 0  # as the CLI shows it
    shown = json.loads(capsys.readouterr().out)
    assert (shown["policy"], shown["files"], shown["bytes"]) == ("KEEP_LATEST_FILE_VERSIONS", 3, planned["bytes"])
    assert {f for s in shown["slices"] for f in s["files"]} == old

    code, cleaned = run(capsys, service(CleanSpec, table, hoodie_conf=ONE_VERSION), spark)
    assert code == 0 and cleaned["outcome"] == "completed"
    assert (cleaned["files"], cleaned["bytes"], set(cleaned["details"]["files"])) == \
        (planned["files"], planned["bytes"], old)
    after = tree(table)
    assert not old & set(after) and MetaClient.open(table).timeline().completed_instant(cleaned["instant"])
    assert not clean_work(MetaClient.open(table), ONE_VERSION).due
    (shown,) = cli_json(capsys, "cleans", table)  # what the control plane shows of it, bytes included
    assert (shown["instant"], shown["policy"], shown["files"], shown["bytes"]) == \
        (cleaned["instant"], "KEEP_LATEST_FILE_VERSIONS", 3, cleaned["bytes"])
    assert read_hudi_rs(table) == read_spark(spark, table) == model.expected()


def test_an_unknown_clean_policy_is_refused_naming_hudis_policies(tmp_path, capsys, spark):
    table, source = tmp_path / "cow", tmp_path / "landing"
    write_source(source / "a.parquet", trips(DAY1, range(5), ts=1))
    assert run(capsys, ingest_args(table, source), spark)[0] == 0
    code, result = run(capsys, service(CleanSpec, table, hoodie_conf={"hoodie.cleaner.policy": "KEEP_NOTHING"}),
                       NoSpark())
    assert code == 2 and "KEEP_LATEST_FILE_VERSIONS" in result["message"]


def test_with_inline_cleaning_off_the_clean_service_rolls_back_a_failed_write(spark, tmp_path, capsys, zookeeper):
    """Writers of a table with a services DAG run no clean inline, so LAZY rollbacks of failed writes
    are the clean service's: due once the heartbeat expired, done even when no file is to be removed."""
    options = {**occ_options(zookeeper.url), "hoodie.clean.automatic": "false"}
    table, failed, _ = failed_write(spark, capsys, tmp_path, options)

    await_stopped_writes_expired(table)
    work = clean_work(MetaClient.open(table), options)
    assert work.due and work.reason == f"1 failed write(s) to roll back, oldest {failed}"
    code, result = run(capsys, service(CleanSpec, table, hoodie_conf=options), spark)
    assert code == 0 and result["instant"] is None and "nothing to clean" in result["reason"]
    meta = MetaClient.open(table)
    spans = {s.requested_time: s.status for s in instant_spans(meta.timeline(), meta.commit_action)}
    assert spans[failed] == ROLLED_BACK and not clean_work(meta, options).due


@pytest.mark.parametrize("table_type", [pytest.param("COPY_ON_WRITE", marks=pytest.mark.long), "MERGE_ON_READ"])
def test_a_restore_to_a_savepoint_reads_exactly_as_at_the_savepoint(spark, tmp_path, capsys, table_type):
    table, source = tmp_path / "trips", tmp_path / "landing"
    model = Model()
    batches = [trips(DAY1, range(20), ts=1) + trips(DAY2, range(5), ts=1), trips(DAY1, range(0, 20, 2), ts=2, fare=2.0),
               trips(DAY2, range(3, 9), ts=3, fare=3.0), trips(DAY1, range(15, 25), ts=4, fare=4.0)]
    for n, rows in enumerate(batches[:2]):
        write_source(source / f"{n}.parquet", rows)
        assert run(capsys, ingest_args(table, source, table_type=table_type), spark)[0] == 0
        model.upsert(rows)
    code, saved = run(capsys, service(SavepointSpec, table), spark)
    assert code == 0 and saved["outcome"] == "created"
    at_savepoint = model.expected()
    assert [s["instant"] for s in cli_json(capsys, "savepoints", table)] == [saved["instant"]]
    for n, rows in enumerate(batches[2:], start=2):  # two more commits
        write_source(source / f"{n}.parquet", rows)
        assert run(capsys, ingest_args(table, source), spark)[0] == 0
    assert read_hudi_rs(table) != at_savepoint

    code, restored = run(capsys, service(RestoreSpec, table, savepoint=saved["instant"]), spark)
    assert code == 0 and restored["outcome"] == "restored" and len(restored["details"]["undone"]) == 2
    assert read_hudi_rs(table) == read_spark(spark, table) == at_savepoint
    code, deleted = run(capsys, service(SavepointSpec, table, delete=saved["instant"]), spark)
    assert code == 0 and deleted["outcome"] == "deleted"
    assert not [i for i in MetaClient.open(table).timeline().completed if i.action == "savepoint"]


def test_a_restore_to_a_missing_savepoint_exits_2_and_changes_nothing(spark, tmp_path, capsys):
    table, source = tmp_path / "trips", tmp_path / "landing"
    write_source(source / "a.parquet", trips(DAY1, range(5), ts=1))
    assert run(capsys, ingest_args(table, source), spark)[0] == 0
    before = tree(table)
    code, result = run(capsys, service(RestoreSpec, table, savepoint="20200101000000000"), NoSpark())
    assert code == 2 and "no savepoint 20200101000000000 (savepoints: none)" in result["message"]
    assert tree(table) == before


def test_rollback_failed_waits_for_the_heartbeat_then_rolls_the_failed_write_back(spark, tmp_path, capsys, zookeeper):
    options = {**occ_options(zookeeper.url), "hoodie.clean.automatic": "false"}
    table, failed, model = failed_write(spark, capsys, tmp_path, options)

    await_stopped_writes_expired(table)
    code, result = run(capsys, service(RollbackFailedSpec, table, hoodie_conf=options), spark)
    assert code == 0 and result["details"]["rolled_back"] == [failed]
    assert not MetaClient.open(table).timeline().pending and read_hudi_rs(table) == model.expected()
    code, again = run(capsys, service(RollbackFailedSpec, table, hoodie_conf=options), NoSpark())
    assert code == 0 and again["reason"] == "no pending write"


def test_rollback_failed_is_refused_unless_failed_writes_are_cleaned_lazily(spark, tmp_path, capsys):
    table, source = tmp_path / "trips", tmp_path / "landing"
    write_source(source / "a.parquet", trips(DAY1, range(5), ts=1))
    assert run(capsys, ingest_args(table, source), spark)[0] == 0
    code, result = run(capsys, service(RollbackFailedSpec, table), NoSpark())  # EAGER, Hudi's default
    assert code == 2 and "hoodie.cleaner.policy.failed.writes=LAZY" in result["message"]
    lazy = {"hoodie.cleaner.policy.failed.writes": "LAZY"}
    code, result = run(capsys, service(RollbackFailedSpec, table, hoodie_conf=lazy), NoSpark())
    assert code == 0 and result["reason"] == "no pending write"


def test_archive_moves_old_instants_to_hudis_archived_timeline(spark, tmp_path, capsys):
    table, source = tmp_path / "trips", tmp_path / "landing"
    # services off inline; the metadata table compacts every commit, since Hudi never archives the data
    # table past the metadata table's last compaction
    inline_off = {"hoodie.archive.automatic": "false", "hoodie.clean.automatic": "false",
                  "hoodie.metadata.compact.max.delta.commits": "1"}
    model = Model()
    for n in range(6):
        rows = trips(DAY1, range(n * 5, n * 5 + 5), ts=n)
        write_source(source / f"{n}.parquet", rows)
        assert run(capsys, ingest_args(table, source, hoodie_conf=inline_off), spark)[0] == 0
        model.upsert(rows)
    writes = [i.requested_time for i in MetaClient.open(table).timeline().completed_writes()]
    rules = {"hoodie.keep.min.commits": "2", "hoodie.keep.max.commits": "3", "hoodie.cleaner.commits.retained": "1"}
    # the check agrees with Hudi: nothing to archive under the default bounds (30 commits), work under these
    idle = archive_work(MetaClient.open(table), {})
    assert not idle.due and idle.reason.startswith("6 completed commit(s)")
    code, kept = run(capsys, service(ArchiveSpec, table), spark)
    assert code == 0 and kept["outcome"] is None, kept
    assert archive_work(MetaClient.open(table), rules).due
    code, result = run(capsys, service(ArchiveSpec, table, hoodie_conf=rules), spark)
    assert code == 0 and result["outcome"] == "completed", result
    archived = result["details"]["archived"]
    meta = MetaClient.open(table)
    assert set(archived) <= set(writes[:-2]) and len(archived) >= 3  # the newest two stay active
    assert {a.requested_time for a in meta.archived_timeline()} >= set(archived)
    assert read_hudi_rs(table) == read_spark(spark, table) == model.expected()


def test_a_table_of_non_blocking_writers_compacts_and_reads_the_model(spark, tmp_path, capsys, zookeeper):
    """Non-blocking concurrency control (MERGE_ON_READ, a simple bucket index) writes only log files
    until a compaction, so the services DAG must compact such a table. The `compact` job's client takes
    the table's type and record key from its properties: Hudi's config checks refuse a non-blocking
    client of the default COPY_ON_WRITE type, and fail on a bucket index without the key."""
    non_blocking = {"hoodie.index.type": "BUCKET", "hoodie.index.bucket.engine": "SIMPLE",
                    "hoodie.bucket.index.num.buckets": "2", WriteConfig.CONCURRENCY_MODE.name: NON_BLOCKING}
    options = occ_options(zookeeper.url, table_options=non_blocking)
    table, source = tmp_path / "trips", tmp_path / "landing"
    model = Model()
    for n in range(2):
        rows = trips(DAY1, range(20), ts=n + 1, fare=float(n))
        write_source(source / f"{n}.parquet", rows)
        code, written = run(capsys, ingest_args(table, source, table_type="MERGE_ON_READ", hoodie_conf=options), spark)
        assert code == 0, written.get("message")
        model.upsert(rows)
    code, compacted = run(capsys, service(CompactSpec, table, mode="scheduleAndExecute",
                                          hoodie_conf={**options, **COMPACT_EVERY_COMMIT}), spark)
    assert code == 0 and compacted["outcome"] == "completed", compacted
    assert all(g.latest_slice.base_file for g in MetaClient.open(table).fs_view().file_groups())
    assert read_hudi_rs(table) == read_spark(spark, table) == model.expected()


def test_an_update_under_a_pending_clustering_commits_first_and_the_clustering_yields_then_replans(
        spark, tmp_path, capsys, zookeeper):
    """Ingestion first (hudi-ops' defaults for tables with several writers, which the job adds to the lock's
    options alone, as a spark-submit of the application passes them): an update to file groups a
    pending clustering plan rewrites commits on its first try; the plan's execution then finds the write
    at its commit, yields, and its plan is withdrawn (rolled back, nothing of it visible), so the next
    schedule plans again over the updated files. No update is lost."""
    table, source = tmp_path / "trips", tmp_path / "landing"
    options = occ_options(zookeeper.url)
    model = Model()
    for n in range(3):
        rows = trips(DAY1, range(n * 10, n * 10 + 10), ts=1)
        write_source(source / f"{n}.parquet", rows)
        small = {**options, "hoodie.parquet.small.file.limit": "0"}
        assert run(capsys, ingest_args(table, source, operation="INSERT", hoodie_conf=small), spark)[0] == 0
        model.upsert(rows)
    code, scheduled = run(capsys, service(ClusterSpec, table, mode="schedule", hoodie_conf=options), spark)
    assert code == 0 and scheduled["file_groups"] == 3

    update = trips(DAY1, range(0, 30, 5), ts=2, fare=7.0)
    write_source(source / "3.parquet", update)
    code, written = run(capsys, ingest_args(table, source, hoodie_conf=options), spark)
    assert code == 0 and written["updates"] == len(update), written.get("message")
    assert read_hudi_rs(table) == model.upsert(update).expected()
    data_files = {k for k in tree(table) if not k.startswith(".hoodie")}

    code, executed = run(capsys, service(ClusterSpec, table, mode="execute", instant_time=scheduled["instant"],
                                         hoodie_conf=options), spark)
    assert code == 0 and executed["outcome"] == "withdrawn", executed
    assert "writer" in executed["reason"] and scheduled["instant"] in executed["reason"]
    meta = MetaClient.open(table)
    assert not pending_plans(meta.timeline(), "clustering")
    spans = {s.requested_time: s.status for s in instant_spans(meta.timeline(), meta.commit_action)}
    assert spans[scheduled["instant"]] == ROLLED_BACK
    # the execution's files went with its rollback
    assert {k for k in tree(table) if not k.startswith(".hoodie")} == data_files
    assert read_hudi_rs(table) == read_spark(spark, table) == model.expected()
    # a later run given the plan's instant (a retried execute task) reports the same and runs nothing
    code, again = run(capsys, service(ClusterSpec, table, mode="execute", instant_time=scheduled["instant"],
                                      hoodie_conf=options), spark)
    assert code == 0 and again["outcome"] == "withdrawn", again

    code, replanned = run(capsys, service(ClusterSpec, table, mode="scheduleAndExecute", hoodie_conf=options), spark)
    assert code == 0 and replanned["outcome"] == "completed", replanned
    assert len(file_groups(table, DAY1)) == 1
    assert read_hudi_rs(table) == read_spark(spark, table) == model.expected()


def test_an_update_to_file_groups_of_a_pending_clustering_is_rejected_under_hudis_default(spark, tmp_path, capsys):
    """A table that keeps Hudi's default `hoodie.clustering.updates.strategy` (SparkRejectUpdateStrategy,
    as a single writer without hudi-ops' lock options does) refuses a write that updates a file group a
    pending clustering plan rewrites: the job exits 3, retryable, naming the plan; once the plan ran
    and the refused write's heartbeat expired (a table without a lock tells a failed attempt from a live
    one by it), the same run commits."""
    table, source = tmp_path / "trips", tmp_path / "landing"
    model = Model()
    for n in range(3):
        rows = trips(DAY1, range(n * 10, n * 10 + 10), ts=1)
        write_source(source / f"{n}.parquet", rows)
        assert run(capsys, ingest_args(table, source, operation="INSERT",
                                       hoodie_conf={"hoodie.parquet.small.file.limit": "0"}), spark)[0] == 0
        model.upsert(rows)
    code, scheduled = run(capsys, service(ClusterSpec, table, mode="schedule"), spark)
    assert code == 0 and scheduled["file_groups"] == 3
    before = tree(table)

    update = trips(DAY1, range(0, 30, 5), ts=2, fare=7.0)
    write_source(source / "3.parquet", update)
    code, refused = run(capsys, ingest_args(table, source, hoodie_conf=HEARTBEAT), spark)
    assert code == 3, refused.get("message")
    assert scheduled["instant"] in refused["message"] and "clustering" in refused["message"]
    assert read_hudi_rs(table) == model.expected()
    assert {k for k in tree(table) if not k.startswith(".hoodie")} == {k for k in before if not k.startswith(".hoodie")}

    assert run(capsys, service(ClusterSpec, table, mode="execute"), spark)[0] == 0
    await_stopped_writes_expired(table)
    code, retried = run(capsys, ingest_args(table, source, hoodie_conf=HEARTBEAT), spark)
    assert code == 0 and retried["updates"] == len(update)
    assert read_hudi_rs(table) == read_spark(spark, table) == model.upsert(update).expected()


def test_a_slice_in_a_pending_compaction_is_never_cleaned(spark, tmp_path, capsys):
    table, source, model = updated_mor_table(spark, capsys, tmp_path, rounds=3)
    code, scheduled = run(capsys, service(CompactSpec, table, mode="schedule", hoodie_conf=COMPACT_EVERY_COMMIT), spark)
    assert code == 0 and scheduled["instant"]
    planned = {p for p in tree(table) if ".hoodie" not in p and not p.endswith(".crc")}  # the data files
    rows = trips(DAY1, range(0, 20, 5), ts=9, fare=9.0)  # an update after the plan
    write_source(source / "9.parquet", rows)
    # as under a services DAG: Hudi's datasource would otherwise run the pending plan inline
    assert run(capsys, ingest_args(table, source, hoodie_conf={"hoodie.compact.inline": "false"}), spark)[0] == 0
    model.upsert(rows)

    assert not next_clean(MetaClient.open(table), ONE_VERSION).slices
    code, cleaned = run(capsys, service(CleanSpec, table, hoodie_conf=ONE_VERSION), spark)
    assert code == 0 and cleaned["files"] == 0, cleaned.get("details")
    assert planned <= set(tree(table))  # nothing the pending plan reads was removed
    code, executed = run(capsys, service(CompactSpec, table, mode="execute"), spark)
    assert code == 0 and executed["outcome"] == "completed"
    assert read_hudi_rs(table) == read_spark(spark, table) == model.expected()
    # compacted, the same slices are superseded, and the same policy now removes them
    expected = next_clean(MetaClient.open(table), ONE_VERSION)
    code, cleaned = run(capsys, service(CleanSpec, table, hoodie_conf=ONE_VERSION), spark)
    assert code == 0 and planned <= set(cleaned["details"]["files"]) == set(expected.files)
    assert read_hudi_rs(table) == model.expected()
