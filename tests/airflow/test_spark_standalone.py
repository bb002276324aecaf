"""The ingest task on a Spark standalone cluster, as docker-compose and a real cluster run it.

A master and a worker started on loopback; the operator's Spark connection points at the master in
client mode (PySpark cannot run in standalone cluster mode), so the driver runs in the task and the
executors on the worker, which get Hudi's bundle through `--jars`.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from local_platform.ports import free_port
from tests.airflow.conftest import SPARK_CONF
from tests.tables import Model, read_hudi_rs, trips, write_source

pytestmark = [pytest.mark.spark, pytest.mark.long]  # spark-submit jobs of its own; make test-long's

SPARK_CLASS = str(Path(sys.executable).parent / "spark-class")


@pytest.fixture(scope="module")
def standalone(tmp_path_factory):
    root = tmp_path_factory.mktemp("standalone")
    port, ui, worker_ui = free_port(), free_port(), free_port()
    env = {**os.environ, "SPARK_LOCAL_IP": "127.0.0.1", "SPARK_WORKER_DIR": str(root / "work"),
           "PYSPARK_PYTHON": sys.executable}
    daemons = {
        "master": ["org.apache.spark.deploy.master.Master", "--host", "127.0.0.1", "--port", str(port),
                   "--webui-port", str(ui)],
        "worker": ["org.apache.spark.deploy.worker.Worker", f"spark://127.0.0.1:{port}", "--host", "127.0.0.1",
                   "--webui-port", str(worker_ui), "--cores", "1", "--memory", "1g"],
    }
    started = []
    for name, args in daemons.items():
        with (root / f"{name}.log").open("w") as log:
            started.append(subprocess.Popen([SPARK_CLASS, *args], env=env, start_new_session=True, stdout=log,
                                            stderr=subprocess.STDOUT))
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{ui}/json/", timeout=5) as answer:
                    if json.load(answer).get("aliveworkers", 0) >= 1:
                        break
            except OSError:
                pass
            assert time.monotonic() < deadline, (root / "worker.log").read_text()[-3000:]
            time.sleep(1)
        yield f"spark://127.0.0.1:{port}", ui
    finally:
        for process in started:
            process.terminate()
            process.wait(timeout=30)


def test_the_ingest_task_runs_on_a_standalone_cluster_in_client_mode(standalone, monkeypatch, tmp_path):
    from hudi_ops.airflow.operators.spark_jobs import HudiIngestOperator

    master, ui = standalone
    host, port = master.removeprefix("spark://").rsplit(":", 1)
    monkeypatch.setenv("AIRFLOW_CONN_SPARK_CLUSTER", json.dumps(
        {"conn_type": "spark", "host": f"spark://{host}", "port": int(port), "extra": {"deploy-mode": "client"}}))
    source, table = tmp_path / "landing", tmp_path / "trips"
    rows = trips("2026-11-20", range(40), ts=1) + trips("2026-11-21", range(40), ts=1)
    write_source(source / "a.parquet", rows)
    op = HudiIngestOperator(
        task_id="ingest", conn_id="spark_cluster", base_path=str(table), table_name="trips",
        record_key_field="trip_id", partition_path_field="dt", ordering_field="ts", source_path=str(source),
        zookeeper_conn_id=None, conf={**SPARK_CONF, "spark.executor.memory": "512m"},
    )
    events = _Events()
    result = op.execute({"outlet_events": events})
    assert result["inserts"] == 80 and result["commits"] == 1
    assert [extra["instant"] for _, extra in events.added] == [result["instant"]]
    assert read_hudi_rs(table) == Model().upsert(rows).expected()
    # the job was the cluster's: the master ran it as an application (and lists it once it ended)
    deadline, apps = time.monotonic() + 60, []
    while not apps and time.monotonic() < deadline:
        with urllib.request.urlopen(f"http://127.0.0.1:{ui}/json/", timeout=5) as answer:
            apps = [a["name"] for a in json.load(answer)["completedapps"]]
        time.sleep(1)
    assert apps == ["hudi-ops-ingest-trips"]


class _Events:
    """The task context's `outlet_events`, which only a scheduled run has: records the Asset events."""

    def __init__(self):
        self.added = []

    def __getitem__(self, alias):
        return self

    def add(self, asset, extra=None):
        self.added.append((asset, extra))
