"""An ingest task in Kubernetes cluster mode: the spark-submit command the Spark provider's hook builds for it, and
its refusal without an upload path. No cluster here: what the Kubernetes API answers is tested against its
recorded answers in tests/unit/test_kubernetes_pods.py."""

from __future__ import annotations

import json
import os
import shutil
import stat
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
from airflow.sdk.exceptions import AirflowFailException

from hudi_ops.config import parse_props_file
from hudi_ops.errors import ConfigError
from hudi_ops.spark.cluster_mode import PROPS_NAME, TAG_LABEL, UPLOAD_PATH, Deployment, application_tag, cluster_conf
from tests.airflow.test_operators import _trips

CONN_ID = "spark_k8s"
MASTER = "k8s://https://127.0.0.1:6443"
UPLOADS = "s3a://lake/spark-uploads"
RUN = {"run_id": "manual__1"}


@pytest.fixture(autouse=True)
def k8s_connection(monkeypatch):
    monkeypatch.setenv(f"AIRFLOW_CONN_{CONN_ID.upper()}", json.dumps(
        {"conn_type": "spark", "host": MASTER, "extra": {"deploy-mode": "cluster", "namespace": "lake"}}))


def _ingest(tmp_path: Path, conf: dict[str, str]) -> Any:
    from hudi_ops.airflow.operators import HudiIngestOperator

    source = tmp_path / "in"
    source.mkdir()
    pq.write_table(_trips([1, 2, 3]), source / "a.parquet")  # work, so that the task goes as far as the submit
    return HudiIngestOperator(
        task_id="ingest", conn_id=CONN_ID, base_path=str(tmp_path / "trips"), table_name="trips",
        record_key_field="id", source_path=str(source), zookeeper_conn_id=None,
        conf={"spark.kubernetes.container.image": "hudi-ops:0.1", **conf},
        hoodie_conf={"hoodie.upsert.shuffle.parallelism": "3"})


def test_the_command_labels_the_driver_with_the_tasks_tag_and_ships_through_the_upload_path(tmp_path):
    op = _ingest(tmp_path, {UPLOAD_PATH: UPLOADS})
    op.prepare(RUN)
    try:
        cmd = op._get_hook()._build_spark_submit_command(op.application)
        confs = dict(cmd[i + 1].split("=", 1) for i, arg in enumerate(cmd) if arg == "--conf")
        assert cmd[1:3] == ["--master", MASTER] and confs[UPLOAD_PATH] == UPLOADS
        assert cmd[cmd.index("--deploy-mode") + 1] == "cluster" and confs["spark.kubernetes.namespace"] == "lake"
        # the same label on every try of the task, which finds its driver pods by it
        tag = application_tag(op.dag_id, "ingest", RUN["run_id"], -1)
        assert confs[f"spark.kubernetes.driver.label.{TAG_LABEL}"] == tag == op._tag
        # spark-submit waits: the provider reads the driver's exit code from what it logs while waiting
        assert confs["spark.kubernetes.submission.waitAppCompletion"] == "true"
        # the options travel as a file Spark uploads, never on the command line
        props = Path(cmd[cmd.index("--files") + 1])
        assert props.name == PROPS_NAME and cmd[cmd.index("--props") + 1] == PROPS_NAME
        assert parse_props_file(props.read_text())["hoodie.upsert.shuffle.parallelism"] == "3"
        assert not any("hoodie." in arg for arg in cmd)
    finally:
        shutil.rmtree(op._folder)  # execute() removes it when the job ends


def test_without_an_upload_path_the_task_fails_before_spark_submit_saying_where_to_set_it(tmp_path, monkeypatch):
    bin_dir, called = tmp_path / "bin", tmp_path / "spark-submit-ran"
    bin_dir.mkdir()
    spark_submit = bin_dir / "spark-submit"  # the one the provider would run: it leaves a trace
    spark_submit.write_text(f"#!/bin/sh\ntouch {called}\n")
    spark_submit.chmod(spark_submit.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PATH", os.pathsep.join([str(bin_dir), os.environ["PATH"]]))
    op = _ingest(tmp_path, {})
    try:
        with pytest.raises((ConfigError, AirflowFailException)) as refused:
            op.execute({**RUN, "outlet_events": {}})
    finally:
        if op._folder:
            shutil.rmtree(op._folder, ignore_errors=True)
    message = str(refused.value)
    assert f"cluster mode on Kubernetes needs {UPLOAD_PATH}" in message
    assert "the operator's `conf`" in message and "`spark_conf` in the tables config" in message
    assert not called.exists()


def test_a_tag_no_label_value_can_carry_is_refused():
    """A label value holds at most 63 characters: the task's tag (33) fits, a longer one would be refused by the API."""
    assert len(application_tag("a" * 250, "b" * 250, "c" * 250, 1000)) <= 63
    with pytest.raises(ConfigError, match="no Kubernetes label value"):
        cluster_conf(Deployment(MASTER, "cluster"), "hudi-ops-" + "0" * 55, {UPLOAD_PATH: UPLOADS})
