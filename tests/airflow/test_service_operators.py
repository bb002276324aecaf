"""Table-service operators in real Airflow (`dag.test()`), real spark-submit, Hudi and ZooKeeper:
schedule and execute as separate tasks with the plan passed by XCom, and idle services skipped
without a JVM."""

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

from hudi_ops.airflow.service_operators import (
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
    from hudi_ops.airflow.service_operators import HudiCleanOperator
    from hudi_ops.errors import InvalidInputError

    with pytest.raises(InvalidInputError, match="a clean plans and executes its own"):
        HudiCleanOperator(task_id="clean", base_path="/t", table_name="t", mode="execute", plan_task_id="x")


def test_savepoint_and_restore_tasks_pass_their_instants_to_the_jobs():
    from hudi_ops.airflow.service_operators import HudiRestoreOperator, HudiSavepointOperator
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
