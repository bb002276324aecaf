"""Hudi's own metrics reporters from the tables config (`metrics:`): its push gateway reporter, as Debian's
Prometheus scrapes the gateway, reports each commit of the table under the table's name."""

from __future__ import annotations

import time
import uuid

from hudi_ops.airflow.dag_factory.tables_config import TableConfig
from hudi_ops.format.meta_client import MetaClient
from hudi_ops.options.job_defaults import resolve_job_options
from tests.integration.test_spark_jobs import DAY1, DAY2, ingest_args, run
from tests.tables import Model, read_hudi_rs, trips, write_source


def _reported(monitoring, metric: str, *, after: float | None = None, timeout_s: float = 60.0) -> tuple[float, dict]:
    """(value, labels) of `metric` as Prometheus holds it, once it holds it (and, with `after`, once its
    value is no longer `after`): the job pushes, Prometheus scrapes a second later."""
    deadline = time.monotonic() + timeout_s
    while True:
        found = monitoring.prometheus.query(metric)
        if found and (after is None or float(found[0]["value"][1]) != after):
            (sample,) = found
            return float(sample["value"][1]), sample["metric"]
        assert time.monotonic() < deadline, f"Prometheus has no {metric} (after {after}) within {timeout_s:g}s"
        time.sleep(0.5)


def test_prometheus_returns_hudis_records_written_for_each_commit_of_the_table(spark, monitoring, tmp_path, capsys):
    name = f"metered_{uuid.uuid4().hex[:8]}"  # Hudi names its metrics after the table
    table, source = tmp_path / name, tmp_path / "landing"
    config = TableConfig(base_path=str(table), record_key="trip_id", metrics={
        "hoodie.metrics.reporter.type": "PROMETHEUS_PUSHGATEWAY",
        "hoodie.metrics.pushgateway.host": monitoring.gateway.host,
        "hoodie.metrics.pushgateway.port": monitoring.gateway.port,
        # the shared session's JVM outlives the job: its reporter pushes each second, not at its exit
        "hoodie.metrics.pushgateway.report.period.seconds": 1})
    options = resolve_job_options("ingest", config.metrics_conf())
    assert options["hoodie.metrics.pushgateway.job.name"] == "hudi_ops_ingest"  # hudi-ops' defaults for Prometheus

    first = trips(DAY1, range(7), ts=1)
    write_source(source / "a.parquet", first)
    code, result = run(capsys, ingest_args(table, source, table_name=name, hoodie_conf=config.metrics_conf()), spark)
    assert code == 0 and result["rows"] == 7, result
    written, labels = _reported(monitoring, f"{name}_commit_totalRecordsWritten")
    assert written == 7 and labels["job"] == "hudi_ops_ingest"
    assert _reported(monitoring, f"{name}_commit_totalPartitionsWritten")[0] == 1
    commit_time = _reported(monitoring, f"{name}_commit_commitTime")[0]

    # 3 updates and 2 new trips: Hudi counts every record of the files the commit wrote
    second = [*trips(DAY1, range(3), ts=2, fare=20.0), *trips(DAY2, range(7, 9), ts=2)]
    write_source(source / "b.parquet", second)
    code, result = run(capsys, ingest_args(table, source, table_name=name, hoodie_conf=config.metrics_conf()), spark)
    assert code == 0 and (result["updates"], result["inserts"]) == (3, 2), result
    _reported(monitoring, f"{name}_commit_commitTime", after=commit_time)  # the second commit's report
    meta = MetaClient.open(table)
    last = meta.timeline().completed_writes()[-1]
    stats = list(meta.timeline().commit_metadata(last).write_stats())
    assert _reported(monitoring, f"{name}_commit_totalRecordsWritten")[0] == sum(s.num_writes for s in stats) == 9
    assert _reported(monitoring, f"{name}_commit_totalUpdateRecordsWritten")[0] == 3
    assert _reported(monitoring, f"{name}_commit_totalInsertRecordsWritten")[0] == 2
    assert read_hudi_rs(table) == Model().upsert(first).upsert(second).expected()
