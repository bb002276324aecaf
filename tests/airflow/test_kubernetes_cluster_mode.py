"""An ingest task in Kubernetes cluster mode: the spark-submit command the Spark provider's hook builds for it, its
refusal without an upload path, and a retry that takes up the driver pod its dead try left running. No cluster
here: the Kubernetes API is the loopback server of tests/unit/test_kubernetes_pods.py, answering as the API does
(its recorded answers)."""

from __future__ import annotations

import json
import os
import shutil
import stat
import threading
import time
import types
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
from airflow.sdk.exceptions import AirflowException, AirflowFailException

from hudi_ops.airflow.operators.resumable import SubmittedApplication
from hudi_ops.errors import ConfigError
from hudi_ops.job_specs import JobResult
from hudi_ops.options.properties_file import parse_props_file
from hudi_ops.spark.cluster_mode import PROPS_NAME, TAG_LABEL, UPLOAD_PATH, Deployment, application_tag, cluster_conf
from tests.airflow.test_operators import _trips
from tests.unit.test_kubernetes_pods import NAMESPACE, _kubeconfig, _pod, _pod_list, _serve, issued_pki
from tests.unit.test_resumable import Store

CONN_ID = "spark_k8s"
MASTER = "k8s://https://127.0.0.1:6443"
UPLOADS = "s3a://lake/spark-uploads"
RUN = {"run_id": "manual__1"}


@pytest.fixture(autouse=True)
def k8s_connection(monkeypatch):
    monkeypatch.setenv(f"AIRFLOW_CONN_{CONN_ID.upper()}", json.dumps(
        {"conn_type": "spark", "host": MASTER, "extra": {"deploy-mode": "cluster", "namespace": "lake"}}))


def _ingest(tmp_path: Path, conf: dict[str, str], conn_id: str = CONN_ID) -> Any:
    from hudi_ops.airflow.operators.spark_jobs import HudiIngestOperator

    source = tmp_path / "in"
    source.mkdir()
    pq.write_table(_trips([1, 2, 3]), source / "a.parquet")  # work, so that the task goes as far as the submit
    return HudiIngestOperator(
        task_id="ingest", conn_id=conn_id, base_path=str(tmp_path / "trips"), table_name="trips",
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


def _traced_spark_submit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The spark-submit the provider would run: it leaves a trace (the file returned), and submits nothing."""
    bin_dir, called = tmp_path / "bin", tmp_path / "spark-submit-ran"
    bin_dir.mkdir()
    spark_submit = bin_dir / "spark-submit"
    spark_submit.write_text(f"#!/bin/sh\ntouch {called}\n")
    spark_submit.chmod(spark_submit.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PATH", os.pathsep.join([str(bin_dir), os.environ["PATH"]]))
    return called


def test_without_an_upload_path_the_task_fails_before_spark_submit_saying_where_to_set_it(tmp_path, monkeypatch):
    called = _traced_spark_submit(tmp_path, monkeypatch)
    op = _ingest(tmp_path, {})
    try:
        with pytest.raises(AirflowFailException) as refused:  # bad settings: not retried
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


class _Events(dict):
    def __missing__(self, key):
        self[key] = types.SimpleNamespace(add=lambda asset, extra=None: None)
        return self[key]


@pytest.fixture
def api_and_retry(tmp_path, monkeypatch):
    """The loopback Kubernetes API the worker's kubeconfig names, and a retry of an ingest task on it whose
    earlier try recorded its submission in the task state store (a dict here; Airflow 3.3's in
    tests/airflow/test_resumable_yarn.py) and died while spark-submit waited."""
    pki = issued_pki(tmp_path)
    for api in _serve(pki, token="worker-token"):
        for key, value in _kubeconfig(tmp_path, pki).items():
            monkeypatch.setenv(key, value)
        monkeypatch.setenv("AIRFLOW_CONN_SPARK_FAKE_K8S", json.dumps(
            {"conn_type": "spark", "host": api.master, "extra": {"deploy-mode": "cluster", "namespace": NAMESPACE}}))
        op = _ingest(tmp_path, {UPLOAD_PATH: UPLOADS}, conn_id="spark_fake_k8s")
        op.poll_interval = 0.05
        store, result = Store(), tmp_path / "result.json"
        tag = application_tag(op.dag_id, "ingest", RUN["run_id"], -1)
        store.set("hudi-ops-cluster-driver", SubmittedApplication(tag, str(result), 0, ("trips-ingest-0f0f-driver",))
                  .to_json())
        context = {**RUN, "outlet_events": _Events(), "task_state_store": store,
                   "dag_run": types.SimpleNamespace(clear_number=0)}
        yield api, op, context, result


def test_a_retry_takes_up_the_driver_pod_its_dead_try_left_running_and_takes_its_result(
    api_and_retry, tmp_path, monkeypatch
):
    api, op, context, result = api_and_retry
    called = _traced_spark_submit(tmp_path, monkeypatch)
    pods = f"/api/v1/namespaces/{NAMESPACE}/pods"
    earlier = _pod("trips-ingest-0f0f-driver", "Succeeded", "2026-01-01T00:01:00Z", exit_code=0)  # an earlier clear's
    running = _pod("trips-ingest-1a2b-driver", "Running", "2026-01-01T00:05:00Z")
    api.answers[("GET", pods)] = (200, _pod_list(earlier, running))
    api.answers[("GET", f"{pods}/trips-ingest-1a2b-driver")] = (200, running)

    def driver_ends() -> None:  # after a few looks, as the driver commits and exits 0, leaving its result
        while sum(r["path"].endswith("1a2b-driver") for r in api.requests) < 3:
            time.sleep(0.02)
        result.write_text(json.dumps(JobResult(job="ingest", instant="20260101000600000", outcome="committed",
                                               commits=1, rows=3, inserts=3).to_dict()) + "\n")
        api.answers[("GET", f"{pods}/trips-ingest-1a2b-driver")] = (200, _pod(
            "trips-ingest-1a2b-driver", "Succeeded", "2026-01-01T00:05:00Z", exit_code=0))

    ender = threading.Thread(target=driver_ends)
    ender.start()
    taken = op.execute(context)
    ender.join()
    assert (taken["outcome"], taken["instant"], taken["inserts"]) == ("committed", "20260101000600000", 3)
    assert not called.exists()  # no new driver
    assert [r["method"] for r in api.requests if r["method"] != "GET"] == []  # nothing deleted
    listed = next(r for r in api.requests if r["path"] == pods)
    assert listed["query"]["labelSelector"] == [f"{TAG_LABEL}={op._tag},spark-role=driver"]
    assert not result.exists()  # read and removed


def test_a_retry_whose_earlier_driver_pod_failed_submits_anew(api_and_retry, tmp_path, monkeypatch):
    api, op, context, _ = api_and_retry
    called = _traced_spark_submit(tmp_path, monkeypatch)
    pods = f"/api/v1/namespaces/{NAMESPACE}/pods"
    failed = _pod("trips-ingest-1a2b-driver", "Failed", "2026-01-01T00:05:00Z", exit_code=137)
    api.answers[("GET", pods)] = (200, _pod_list(failed))
    with pytest.raises(AirflowException, match="Cannot execute: spark-submit"):  # the traced one logs no exit code
        op.execute(context)
    assert called.exists()  # submitted anew
    # the earlier record looked at (the failed pod found), the live pods ended (none), this try's record kept
    assert [(r["method"], r["path"]) for r in api.requests] == [("GET", pods)] * 3
    recorded = SubmittedApplication.from_json(context["task_state_store"].get("hudi-ops-cluster-driver"))
    assert recorded is not None and recorded.known == ("trips-ingest-1a2b-driver",)
