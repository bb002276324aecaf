"""The table services' registry: each service's job, its inline-off keys, and `HudiServiceOperator` built
on it running each service as the service's own operator does (the group's DAG runs it under a real
scheduler in tests/airflow/test_local_airflow_dags.py)."""

from __future__ import annotations

import pytest

from hudi_ops.airflow.operators.table_services import (
    HudiArchiveOperator,
    HudiCleanOperator,
    HudiClusteringOperator,
    HudiCompactionOperator,
    HudiServiceOperator,
)
from hudi_ops.errors import InvalidInputError
from hudi_ops.read.table_services import SERVICES, inline_off, table_service

OWN_OPERATORS = {"compaction": HudiCompactionOperator, "clustering": HudiClusteringOperator,
                 "clean": HudiCleanOperator, "archive": HudiArchiveOperator}
TABLE = {"base_path": "/lake/trips", "table_name": "trips", "hoodie_conf": {}}


def test_the_services_run_in_a_services_dags_order_each_as_its_job():
    assert [(s.name, s.job, s.plans) for s in SERVICES.values()] == [
        ("compaction", "compact", True), ("clustering", "cluster", True), ("clean", "clean", False),
        ("archive", "archive", False)]
    with pytest.raises(InvalidInputError, match="unknown service 'compact'; use one of compaction, clustering"):
        table_service("compact")


def test_a_writer_leaves_each_service_to_its_job_with_hudis_keys():
    assert inline_off(["compaction", "archive"]) == {
        "hoodie.compact.inline": "false", "hoodie.compact.schedule.inline": "false",
        "hoodie.archive.automatic": "false"}
    assert inline_off(["clustering", "clean"]) == {
        "hoodie.clustering.inline": "false", "hoodie.clustering.schedule.inline": "false",
        "hoodie.clean.automatic": "false"}


@pytest.mark.parametrize("service", list(OWN_OPERATORS))
@pytest.mark.parametrize("mode", ["schedule", "execute", "scheduleAndExecute"])
def test_the_service_operator_submits_each_service_as_its_own_operator_does(service, mode):
    own_operator = OWN_OPERATORS[service]
    own = own_operator(task_id="own", **TABLE, **({} if own_operator is HudiArchiveOperator else {"mode": mode}))
    mapped = HudiServiceOperator(task_id="mapped", service=service, mode=mode, **TABLE)
    assert (mapped.job, mapped.name, mapped.retries) == (own.job, own.name, own.retries)
    assert mapped.job_spec({}, {"hoodie.x": "1"}) == own.job_spec({}, {"hoodie.x": "1"})


def test_the_service_operator_refuses_an_unknown_service():
    with pytest.raises(InvalidInputError, match="unknown service 'compact'"):
        HudiServiceOperator(task_id="mapped", service="compact", **TABLE)
