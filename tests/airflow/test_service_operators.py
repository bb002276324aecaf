"""Table-service operators in real Airflow (`dag.test()`), real spark-submit, Hudi and ZooKeeper:
schedule and execute as separate tasks with the plan passed by XCom, clustering and archival run end to
end, and idle services skipped without a JVM."""

from __future__ import annotations

import pytest

from hudi_ops.format.meta_client import MetaClient
from hudi_ops.read.pending_plans import pending_plans
from hudi_ops.spark.__main__ import main
from tests.airflow.conftest import SPARK_CONF, dag_in_folder, run_states
from tests.integration.test_spark_jobs import ingest_args
from tests.tables import Model, read_hudi_rs, trips, write_source

DAG_ID = "hudi_ops_test_services"
DAG_FILE = f'''
from airflow.sdk import DAG, Param

from hudi_ops.airflow.operators.table_services import (
    HudiArchiveOperator, HudiCleanOperator, HudiClusteringOperator, HudiCompactionOperator)

common = dict(base_path="{{{{ params.base_path }}}}", table_name="trips", conf={SPARK_CONF!r},
              hoodie_conf={{"hoodie.compact.inline.max.delta.commits": "2",
                           "hoodie.clustering.plan.strategy.single.group.clustering.enabled": "false"}})
with DAG("{DAG_ID}", schedule=None, params={{"base_path": Param("")}}):
    schedule = HudiCompactionOperator(task_id="schedule_compaction", mode="schedule", **common)
    execute = HudiCompactionOperator(task_id="execute_compaction", mode="execute",
                                     plan_task_id="schedule_compaction", **common)
    schedule >> execute
    HudiClusteringOperator(task_id="cluster", **common)
    HudiCleanOperator(task_id="clean", **common)
    HudiArchiveOperator(task_id="archive", **common)
'''
DAY1, DAY2 = "2026-11-20", "2026-11-21"
REWRITE_DAG_ID = "hudi_ops_test_cluster_then_archive"
#: the writers' metadata table compacts every 2 delta commits: the data table archives only what its
#: metadata table has compacted; the archive task keeps 2 to 3 commits (the clean 1, below them), the
#: writers Hudi's 20 to 30 (they archive nothing inline here)
COMPACTED_METADATA = {"hoodie.metadata.compact.max.delta.commits": "2"}
SHORT_ARCHIVAL = {"hoodie.keep.min.commits": "2", "hoodie.keep.max.commits": "3",
                  "hoodie.cleaner.commits.retained": "1", **COMPACTED_METADATA}
REWRITE_DAG_FILE = f'''
from airflow.sdk import DAG, Param

from hudi_ops.airflow.operators.table_services import HudiArchiveOperator, HudiClusteringOperator

common = dict(base_path="{{{{ params.base_path }}}}", table_name="trips", conf={SPARK_CONF!r},
              hoodie_conf={SHORT_ARCHIVAL!r})
with DAG("{REWRITE_DAG_ID}", schedule=None, params={{"base_path": Param("")}}):
    HudiClusteringOperator(task_id="cluster", **common) >> HudiArchiveOperator(task_id="archive", **common)
'''


@pytest.fixture
def services_dag(airflow_db):
    with dag_in_folder(DAG_ID, DAG_FILE) as dag:
        yield dag


def ingest(spark, table, source, table_type, n, rows):
    write_source(source / f"{n}.parquet", rows)
    code = main(ingest_args(table, source, table_type=table_type), spark=spark)
    assert code == 0


def test_compaction_is_scheduled_by_one_task_and_executed_by_the_next_through_xcom(
    services_dag, zookeeper_connection, spark, tmp_path, capsys
):
    table, source = tmp_path / "trips", tmp_path / "landing"
    model = Model()
    for n in range(3):
        rows = trips(DAY1, range(0, 20, 1 if n == 0 else 2), ts=n, fare=float(n)) + trips(DAY2, range(5), ts=n)
        ingest(spark, table, source, "MERGE_ON_READ", n, rows)
        model.upsert(rows)
    capsys.readouterr()

    run = services_dag.test(run_conf={"base_path": str(table)})
    assert run.state == "success"
    assert run_states(run) == {"schedule_compaction": "success", "execute_compaction": "success",
                           "cluster": "skipped", "clean": "skipped", "archive": "skipped"}
    (scheduled,) = [t for t in run.get_task_instances() if t.task_id == "schedule_compaction"]
    plan = scheduled.xcom_pull(task_ids="schedule_compaction")["instant"]
    timeline = MetaClient.open(table).timeline()
    assert timeline.completed_instant(plan).action == "commit" and not pending_plans(timeline, "compaction")
    assert read_hudi_rs(table, read_optimized=True) == read_hudi_rs(table) == model.expected()


def test_a_clustering_task_rewrites_small_files_and_an_archive_task_archives_old_instants(
    airflow_db, zookeeper_connection, spark, tmp_path
):
    """Five BULK_INSERTs, each a small file group of its own: the clustering task rewrites them, then the
    archive task moves the oldest instants to Hudi's archived timeline; the table reads as before."""
    table, source = tmp_path / "trips", tmp_path / "landing"
    model = Model()
    for n in range(5):
        rows = trips(DAY1, range(n * 4, n * 4 + 4), ts=1)
        write_source(source / f"{n}.parquet", rows)
        args = ingest_args(table, source, operation="BULK_INSERT", hoodie_conf=COMPACTED_METADATA)
        assert main(args, spark=spark) == 0
        model.upsert(rows)
    assert not list(MetaClient.open(table).archived_timeline())
    with dag_in_folder(REWRITE_DAG_ID, REWRITE_DAG_FILE) as dag:
        run = dag.test(run_conf={"base_path": str(table)})
    assert run.state == "success" and run_states(run) == {"cluster": "success", "archive": "success"}
    results = {t.task_id: t.xcom_pull(task_ids=t.task_id) for t in run.get_task_instances()}
    assert (results["cluster"]["outcome"], results["cluster"]["file_groups"]) == ("completed", 5), results
    meta = MetaClient.open(table)
    assert meta.timeline().completed_instant(results["cluster"]["instant"]).action == "replacecommit"
    live = [g for g in meta.fs_view().file_groups() if g.latest_slice]
    assert len(live) == 1  # 20 rows: one file
    archived = {a.requested_time for a in meta.archived_timeline()}
    assert archived and archived.isdisjoint(i.requested_time for i in meta.timeline().completed)
    assert read_hudi_rs(table) == model.expected()


def test_services_with_nothing_due_are_skipped_without_starting_spark(
    services_dag, zookeeper_connection, spark, tmp_path, capfd
):
    table, source = tmp_path / "trips", tmp_path / "landing"
    ingest(spark, table, source, "COPY_ON_WRITE", 0, trips(DAY1, range(10), ts=1))
    capfd.readouterr()
    run = services_dag.test(run_conf={"base_path": str(table)})
    assert run.state == "success" and set(run_states(run).values()) == {"skipped"}
    log = "".join(capfd.readouterr())
    assert "a COPY_ON_WRITE table has no log files to compact" in log
    assert "no partition has 2 file group(s) under" in log  # never clustered: every partition counts
    assert "1 completed commit(s), 0 completed clean(s), 0 completed rollback(s) active, at most " \
        "hoodie.keep.max.commits=30" in log
    assert "Spark-Submit cmd" not in log


def test_a_clean_task_given_a_plan_argument_is_refused_when_the_dag_is_built():
    from hudi_ops.airflow.operators.table_services import HudiCleanOperator
    from hudi_ops.errors import InvalidInputError

    with pytest.raises(InvalidInputError, match="a clean plans and executes its own"):
        HudiCleanOperator(task_id="clean", base_path="/t", table_name="t", mode="execute", plan_task_id="x")


def test_savepoint_and_restore_tasks_pass_their_instants_to_the_jobs():
    from hudi_ops.airflow.operators.table_services import HudiRestoreOperator, HudiSavepointOperator
    from hudi_ops.errors import InvalidInputError
    from hudi_ops.job_specs import RestoreSpec, SavepointSpec

    common = {"base_path": "/t", "table_name": "t"}
    create = HudiSavepointOperator(task_id="sp", instant_time="20261120000000000", comment="before the fix", **common)
    delete = HudiSavepointOperator(task_id="unsp", instant_time="20261120000000000", delete=True, **common)
    restore = HudiRestoreOperator(task_id="restore", savepoint="20261120000000000", **common)
    assert create.job_spec({}, {}) == SavepointSpec(base_path="/t", instant_time="20261120000000000",
                                                    comment="before the fix")
    assert delete.job_spec({}, {}) == SavepointSpec(base_path="/t", delete="20261120000000000")
    assert restore.job_spec({}, {"hoodie.x": "1"}) == \
        RestoreSpec(base_path="/t", savepoint="20261120000000000", hoodie_conf={"hoodie.x": "1"})
    with pytest.raises(InvalidInputError, match="delete=True needs the savepoint's instant_time"):
        HudiSavepointOperator(task_id="bad", delete=True, **common)
