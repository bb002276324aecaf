"""hudi-ops' JVM-free control plane reads what Hudi writes (table version 9, metadata table on) as Hudi does.

Tables are written by the jobs; the expected answers come from Hudi's own procedures in the same
Spark session (`show_commits`, `show_fsview_latest`, `show_compaction`) and, for the timeline, from
Hudi's `HoodieTableMetaClient` (1.1 has no `show_timeline` procedure).
"""

from __future__ import annotations

import pytest

from hudi_ops.format.meta_client import MetaClient
from hudi_ops.format.plans import CompactionPlan
from hudi_ops.read.table_overview import commit_stats, file_group_summaries
from hudi_ops.spark.__main__ import main
from tests.integration.test_spark_jobs import ingest_args
from tests.tables import trips, write_source

DAYS = ("2026-11-20", "2026-11-21", "2026-11-22")


@pytest.fixture(scope="module", params=["COPY_ON_WRITE", "MERGE_ON_READ"])
def table(request, spark, tmp_path_factory):
    """Three ingests, each updating the previous day and adding the next (a MERGE_ON_READ table logs the
    updates), registered in Spark's catalog for the procedures."""
    kind = request.param
    path = _three_ingests(spark, tmp_path_factory.mktemp(kind.lower()), kind)
    name = f"agree_{kind.lower()}"
    spark.sql(f"CREATE TABLE {name} USING hudi LOCATION '{path}'")
    return name, path


def _three_ingests(spark, root, kind):
    path, source = root / "trips", root / "landing"
    for n in range(3):
        rows = trips(DAYS[n], range(30), ts=n + 1) + (trips(DAYS[n - 1], range(10), ts=n + 1) if n else [])
        write_source(source / f"{n}.parquet", rows)
        assert main(ingest_args(path, source, table_type=kind), spark=spark) == 0
    return path


def _call(spark, procedure: str, **args) -> list:
    given = ", ".join(f"{k} => {v!r}" if isinstance(v, str) else f"{k} => {v}" for k, v in args.items())
    return spark.sql(f"CALL {procedure}({given})").collect()


def test_the_timeline_lists_what_hudi_lists(spark, table):
    _, path = table
    timeline = MetaClient.open(path).timeline()  # each instant once, in its latest state, as Hudi lists them
    ours = {(i.requested_time, i.action, i.state.name) for i in (*timeline.completed, *timeline.pending)}
    assert ours == _hudis_active_timeline(spark, path) and len(ours) >= 3


def _hudis_active_timeline(spark, path) -> set[tuple[str, str, str]]:
    jvm = spark._jvm
    conf = jvm.org.apache.hudi.storage.hadoop.HadoopStorageConfiguration(spark._jsc.hadoopConfiguration())
    meta = jvm.org.apache.hudi.common.table.HoodieTableMetaClient.builder().setConf(conf) \
        .setBasePath(str(path)).build()
    return {(i.requestedTime(), i.getAction(), i.getState().name()) for i in meta.getActiveTimeline().getInstants()}


def test_commit_stats_are_hudis(spark, table):
    name, path = table
    ours = {(c.instant, c.completed, c.action, c.bytes, c.writes, c.partitions)
            for c in commit_stats(MetaClient.open(path).timeline())}
    hudis = {(r.commit_time, r.state_transition_time, r.action, r.total_bytes_written, r.total_records_written,
              r.total_partitions_written) for r in _call(spark, "show_commits", table=name, limit=1000)}
    assert ours == hudis and len(ours) == 3


def test_the_latest_file_slices_are_hudis(spark, table):
    _, path = table
    meta = MetaClient.open(path)
    ours = {(g.partition, g.file_id, g.base_instant, g.base_file, g.log_files)
            for g in file_group_summaries(meta, meta.timeline())}
    hudis = {(r.partition, r.file_id, r.base_instant, r.data_file.rsplit("/", 1)[-1] if r.data_file else None,
              r.num_delta_files) for r in _call(spark, "show_fsview_latest", path=str(path), limit=10_000)}
    assert ours == hudis and {p for p, *_ in ours} == set(DAYS)
    if meta.is_mor:
        assert any(logs for *_, logs in ours)  # the updates went to log files


def test_a_pending_compaction_plan_is_read_as_hudi_planned_it(spark, tmp_path):
    # a table of its own (compaction: MERGE_ON_READ), since it writes after the plan: the module's tables
    # stay as the other tests read them, whatever the order
    path = _three_ingests(spark, tmp_path, "MERGE_ON_READ")
    # plan now, not after Hudi's default of 5 deltacommits
    (scheduled,) = _call(spark, "run_compaction", op="schedule", path=str(path),
                         options="hoodie.compact.inline.max.delta.commits=1")
    meta = MetaClient.open(path)
    timeline = meta.timeline()
    (pending,) = [i for i in timeline.pending if i.action == "compaction"]
    plan = CompactionPlan.from_avro_bytes(timeline.read_bytes(pending))
    hudis = {r.timestamp: (r.operation_size, r.state) for r in _call(spark, "show_compaction", path=str(path))}
    assert hudis == {pending.requested_time: (len(plan.operations), "REQUESTED")}
    assert scheduled.timestamp == pending.requested_time
    # the file-system view reports the plan's file groups, which writers then leave to the compaction
    planned = {(op.partition_path, op.file_id) for op in plan.operations}
    view = meta.fs_view(timeline).pending_compaction
    assert {(g.partition_path, g.file_id) for g in view} == planned and set(view.values()) == {pending.requested_time}
    with_logs = {(g.partition, g.file_id) for g in file_group_summaries(meta, timeline) if g.log_files}
    assert planned == with_logs
    logs_before = {(g.partition, g.file_id): g.log_files for g in file_group_summaries(meta, timeline)}
    # updates after the plan: Hudi logs them in a new slice at the plan's instant, which its latest view
    # merges with the slice the plan compacts; the control plane lists them as that merged slice
    rows = trips(DAYS[2], range(5), ts=9)
    write_source(path.parent / "landing" / "after-plan.parquet", rows)
    ingest = ingest_args(path, path.parent / "landing", hoodie_conf={"hoodie.compact.inline": "false"})
    assert main(ingest, spark=spark) == 0
    meta = MetaClient.open(path)
    ours = {(g.partition, g.file_id, g.base_instant, g.base_file, g.log_files)
            for g in file_group_summaries(meta, meta.timeline())}
    hudis = {(r.partition, r.file_id, r.base_instant, r.data_file.rsplit("/", 1)[-1] if r.data_file else None,
              r.num_delta_files) for r in _call(spark, "show_fsview_latest", path=str(path), limit=10_000)}
    assert ours == hudis
    assert any(logs > logs_before[(p, f)] for p, f, *_, logs in ours)  # the new logs are in the merged slice
