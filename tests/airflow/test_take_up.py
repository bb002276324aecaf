"""What a retry does with the driver its earlier try recorded (hudi_ops.airflow.operators.resumable), case by
case, against a cluster whose answers the test sets (hudi_ops.spark.cluster_drivers' interface): follow it,
take its result, or submit anew. A real YARN under a real Airflow runs the main cases in test_resumable_yarn.py;
the Kubernetes API's recorded answers in test_kubernetes_cluster_mode.py."""

from __future__ import annotations

import dataclasses
import json
import types
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from airflow.sdk.exceptions import AirflowException

from hudi_ops.airflow import metrics
from hudi_ops.airflow.operators.resumable import KEY, SubmittedApplication
from hudi_ops.airflow.operators.spark_jobs import HudiIngestOperator
from hudi_ops.job_specs import JobResult
from tests.airflow.test_kubernetes_cluster_mode import _traced_spark_submit
from tests.airflow.test_operators import _trips
from tests.unit.test_resumable import Store

CONN_ID = "spark_cluster_fake"
RUN = "manual__1"


@dataclasses.dataclass(frozen=True)
class App:
    id: str
    live: bool = False
    succeeded: bool = False
    elapsed_ms: int = 0
    deleting: bool = False

    def ended_as(self) -> str:
        return "SUCCEEDED" if self.succeeded else "FAILED"


class Cluster:
    """Answers as the test says: `apps` by id, each id's later states in `then` (one per look)."""

    where = "the test's cluster"

    def __init__(self, *apps: App, then: dict[str, list[App | None]] | None = None) -> None:
        self.apps, self.then, self.ended = {a.id: a for a in apps}, then or {}, []

    def tagged(self, tag):
        return list(self.apps.values())

    def get(self, driver_id):
        if self.then.get(driver_id):
            return self.then[driver_id].pop(0)
        return self.apps.get(driver_id)

    def end_live(self, tag, *, timeout_s):
        self.ended.append(tag)
        return []


@pytest.fixture
def retry(tmp_path, monkeypatch):
    """An ingest task's retry in cluster mode whose earlier try recorded `application_1_2` (its context, the result
    file its job writes, the durations it counted), and a spark-submit that leaves a trace if it runs."""
    monkeypatch.setenv(f"AIRFLOW_CONN_{CONN_ID.upper()}", json.dumps(
        {"conn_type": "spark", "host": "yarn", "extra": {"deploy-mode": "cluster"}}))
    counted: dict[str, list] = {"ran": [], "failed": []}
    monkeypatch.setattr(metrics, "ran", lambda tags, result, ms: counted["ran"].append(ms))
    monkeypatch.setattr(metrics, "failed", lambda tags, code, error, ms: counted["failed"].append(ms))
    source = tmp_path / "in"
    source.mkdir()
    pq.write_table(_trips([1, 2, 3]), source / "a.parquet")  # work: a new submission goes as far as spark-submit
    op = HudiIngestOperator(task_id="ingest", conn_id=CONN_ID, base_path=str(tmp_path / "trips"), table_name="trips",
                            record_key_field="id", source_path=str(source), zookeeper_conn_id=None,
                            poll_interval=0.01)
    result = tmp_path / "result.json"
    store = Store()
    store.set(KEY, SubmittedApplication(op._task_tag({"run_id": RUN}), str(result), 0, ("application_1_1",),
                                        "application_1_2").to_json())
    context = {"run_id": RUN, "task_state_store": store, "dag_run": types.SimpleNamespace(clear_number=0),
               "outlet_events": _Events()}
    return types.SimpleNamespace(op=op, context=context, result=result, counted=counted,
                                 submitted=_traced_spark_submit(tmp_path, monkeypatch))


class _Events(dict):
    def __missing__(self, key):
        self[key] = types.SimpleNamespace(add=lambda asset, extra=None: None)
        return self[key]


def _committed(result: Path) -> None:
    result.write_text(json.dumps(JobResult(job="ingest", instant="20260101000600000", outcome="committed",
                                           commits=1, rows=3, inserts=3).to_dict()) + "\n")


def test_a_running_driver_is_followed_and_its_result_taken_once_it_ends(retry):
    retry.op.__dict__["cluster"] = Cluster(App("application_1_2", live=True), then={"application_1_2": [
        App("application_1_2", live=True), App("application_1_2", succeeded=True, elapsed_ms=4200)]})
    _committed(retry.result)
    taken = retry.op.execute(retry.context)
    assert (taken["outcome"], taken["instant"]) == ("committed", "20260101000600000")
    assert retry.counted == {"ran": [4200], "failed": []}  # the application's own time, as the cluster reports it
    assert not retry.result.exists() and not retry.submitted.exists()  # removed once the run ended with it


@pytest.mark.parametrize("cluster", [Cluster(App("application_1_2", succeeded=True)), Cluster()],
                         ids=["ended-well", "gone-from-the-cluster"])
def test_a_driver_that_ended_well_or_is_gone_gives_its_result_without_a_new_submission(retry, cluster):
    retry.op.__dict__["cluster"] = cluster
    _committed(retry.result)
    assert retry.op.execute(retry.context)["instant"] == "20260101000600000"
    assert not retry.submitted.exists()
    (duration,) = retry.counted["ran"]
    assert duration < 60_000  # measured from this try's start when the cluster reports none


@pytest.mark.parametrize("cluster, committed", [
    (Cluster(App("application_1_2", succeeded=True)), False),  # its result was taken by a try that died after
    (Cluster(App("application_1_2")), True),  # it failed (its result is a failure's, or a stale one)
    (Cluster(App("application_1_2", live=True, deleting=True)), False),  # a pod on its way out
    (Cluster(), False),  # gone, and no result: nothing to take
], ids=["ended-well-result-taken", "failed", "being-deleted", "gone-without-result"])
def test_otherwise_the_retry_submits_anew(retry, cluster, committed):
    retry.op.__dict__["cluster"] = cluster
    if committed:
        _committed(retry.result)
    with pytest.raises(AirflowException, match="left no result"):  # the traced spark-submit writes none
        retry.op.execute(retry.context)
    assert retry.submitted.exists()


def test_a_record_of_another_clear_of_the_run_is_not_taken_up(retry):
    retry.op.__dict__["cluster"] = Cluster(App("application_1_2", succeeded=True))
    _committed(retry.result)
    with pytest.raises(AirflowException, match="left no result"):
        retry.op.execute({**retry.context, "dag_run": types.SimpleNamespace(clear_number=1)})
    assert retry.submitted.exists() and retry.result.exists()  # not this clear's: left alone


def test_a_kill_while_the_retry_follows_ends_the_driver(retry):
    cluster = Cluster(App("application_1_2", live=True))
    retry.op.__dict__["cluster"] = cluster
    original_get = cluster.get

    def get(driver_id):  # the user marks the task failed while it follows
        retry.op.on_kill()
        return original_get(driver_id)

    cluster.get = get
    with pytest.raises(AirflowException, match="killed while application_1_2 ran"):
        retry.op.execute(retry.context)
    assert cluster.ended and set(cluster.ended) == {retry.op._tag}
    assert len(retry.counted["failed"]) == 1 and not retry.submitted.exists()
