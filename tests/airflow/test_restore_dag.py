"""The restore DAG through `dag.test()` with a real api-server on the same metadata database: it pauses
the table's writer DAGs through the REST API, refuses a savepoint the table lacks before Spark starts,
and unpauses what it paused; the savepoint task runs for real. (A restore that runs, with its wait
for a writer task at work, needs a scheduler: test_local_airflow.)"""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
import time

import pytest

from hudi_ops.airflow.hooks.airflow_api import AirflowApi, AirflowApiError
from hudi_ops.format.meta_client import MetaClient
from hudi_ops.read.savepoints import savepointed
from hudi_ops.spark.__main__ import main
from local_platform.ports import free_port
from tests.airflow.conftest import HOME, SPARK_CONF, dag_in_folder, repo_dags, run_states
from tests.integration.test_spark_jobs import ingest_args
from tests.tables import Model, read_hudi_rs, trips, write_source

INGEST, SERVICES, RESTORE = "hudi_ingest__trips", "hudi_services__trips", "hudi_restore__trips"
DAY = "2026-11-20"
SAVEPOINT_DAG = "hudi_ops_test_savepoint"
SAVEPOINT_DAG_FILE = f'''
from airflow.sdk import DAG, Param

from hudi_ops.airflow.operators.table_services import HudiSavepointOperator

with DAG("{SAVEPOINT_DAG}", schedule=None, params={{"base_path": Param("")}}):
    HudiSavepointOperator(task_id="savepoint", base_path="{{{{ params.base_path }}}}", table_name="trips",
                          comment="before the bad batches", conf={SPARK_CONF!r})
'''


@pytest.fixture(scope="module")
def api_server(airflow_db):
    """`airflow api-server` on loopback over the tests' metadata database, with one admin user."""
    password = secrets.token_urlsafe(12)
    users = HOME / "restore-test-passwords.json"
    users.write_text(json.dumps({"admin": password}))
    port = free_port()
    env = {**os.environ,
           "AIRFLOW__CORE__AUTH_MANAGER":
               "airflow.api_fastapi.auth.managers.simple.simple_auth_manager.SimpleAuthManager",
           "AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_USERS": "admin:admin",
           "AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_PASSWORDS_FILE": str(users),
           "AIRFLOW__API_AUTH__JWT_SECRET": secrets.token_urlsafe(32)}
    log = (HOME / "api-server.log").open("wb")
    process = subprocess.Popen([sys.executable, "-m", "airflow", "api-server", "--host", "127.0.0.1", "--port",
                                str(port)], env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    api = AirflowApi(f"http://127.0.0.1:{port}", "admin", password)
    try:
        deadline = time.monotonic() + 120
        while True:
            assert process.poll() is None, (HOME / "api-server.log").read_text()[-3000:]
            try:
                api.call("GET", "/api/v2/monitor/health", auth=False)
                break
            except AirflowApiError:
                assert time.monotonic() < deadline, (HOME / "api-server.log").read_text()[-3000:]
                time.sleep(1)
        yield api
    finally:
        process.terminate()
        process.wait(30)
        log.close()


@pytest.fixture
def table_dags(api_server, zookeeper_connection, tmp_path, monkeypatch):
    """The repo's DAG file for a trips table with an ingest and a services DAG, known to the api-server."""
    monkeypatch.setenv("AIRFLOW_CONN_HUDI_OPS_AIRFLOW_API", json.dumps(
        {"conn_type": "http", "host": "127.0.0.1", "port": int(api_server.url.rsplit(":", 1)[1]),
         "login": "admin", "password": api_server.password}))
    config = {"defaults": {"spark_conf": SPARK_CONF},
              "tables": {"trips": {"base_path": str(tmp_path / "trips"), "record_key": "trip_id",
                                   "partition_field": "dt", "ordering_field": "ts",
                                   "ingest": {"source_path": str(tmp_path / "landing"), "schedule": "@hourly"},
                                   "services": {"clean": {}},
                                   "restore": {"wait_timeout_minutes": 3}}}}
    with repo_dags(config, tmp_path, monkeypatch) as bag:
        assert {INGEST, SERVICES, RESTORE} <= set(bag.dag_ids)
        from airflow.dag_processing.bundles.manager import DagBundlesManager
        from airflow.dag_processing.dagbag import sync_bag_to_db

        DagBundlesManager().sync_bundles_to_db()
        sync_bag_to_db(bag, "dags-folder", None)  # what the dag-processor does: the api-server now knows them
        yield bag


def ingest(spark, table, source, n, model):
    rows = trips(DAY, range(0, 10, 1 if n == 0 else 2), ts=n, fare=float(n))
    write_source(source / f"{n}.parquet", rows)
    code = main(ingest_args(table, source), spark=spark)
    assert code == 0
    return model.upsert(rows).expected()


def test_a_restore_to_a_missing_savepoint_fails_before_spark_and_gives_the_writers_back(
    table_dags, api_server, spark, tmp_path, capfd
):
    """The savepoint task (a real spark-submit) marks the latest commit; a restore to another instant
    fails before Spark starts, restores nothing and unpauses the writers it paused. (The restore's
    success path, with its wait for a writer at work: test_local_airflow.)"""
    table, source = tmp_path / "trips", tmp_path / "landing"
    model = Model()
    expected = ingest(spark, table, source, 0, model)
    with dag_in_folder(SAVEPOINT_DAG, SAVEPOINT_DAG_FILE) as savepoint_dag:
        made = savepoint_dag.test(run_conf={"base_path": str(table)})
    assert made.state == "success"
    (savepoint,) = savepointed(MetaClient.open(table))
    assert savepoint == MetaClient.open(table).timeline().completed_writes()[-1].requested_time
    api_server.set_paused(INGEST, False)
    api_server.set_paused(SERVICES, False)
    capfd.readouterr()
    run = table_dags.get_dag(RESTORE).test(run_conf={"savepoint": "20261120000000000"})
    assert run.state == "failed"
    assert run_states(run) == {"pause_writers": "success", "wait_for_writers": "success", "restore": "failed",
                           "unpause_writers": "failed"}
    log = "".join(capfd.readouterr())
    assert "has no savepoint 20261120000000000" in log and "Spark-Submit cmd" not in log
    assert f"restore did not run, or failed before changing {table}; the writers {INGEST}, {SERVICES} run again" \
        in log
    assert (api_server.is_paused(INGEST), api_server.is_paused(SERVICES)) == (False, False)
    assert read_hudi_rs(table) == expected and savepointed(MetaClient.open(table)) == {savepoint}
