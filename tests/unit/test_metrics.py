"""hudi-ops' metrics as Airflow's StatsD client sends them (a real UDP listener on loopback), and their
reference: docs/metrics.md names every one."""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path

import pytest

from hudi_ops.airflow import metrics
from hudi_ops.read.table_need import TableNeed
from tests.statsd_listener import StatsdListener

DOC = Path(__file__).resolve().parents[2] / "docs" / "metrics.md"


def test_docs_metrics_md_names_every_metric_hudi_ops_sends():
    names = {v for k, v in vars(metrics).items() if k.isupper() and isinstance(v, str) and v != metrics.PREFIX}
    names |= set(metrics.WAITS.values())
    documented = set(re.findall(r"`(hudi_ops\.[a-z0-9_]+)`", DOC.read_text()))
    assert names and names <= documented, names - documented
    assert documented <= names, documented - names  # and none that is not sent


@pytest.fixture
def statsd(monkeypatch):
    from airflow.sdk.observability import stats
    from airflow.sdk.observability.metrics import stats_utils

    listener = StatsdListener()
    for key, value in listener.airflow_env().items():
        monkeypatch.setenv(key, value)
    stats.initialize(factory=stats_utils.get_stats_factory(), export_legacy_names=False)
    yield listener
    stats.initialize(factory=lambda: stats_utils.NoStatsLogger(), export_legacy_names=False)
    listener.close()


def test_a_conflict_its_retry_and_the_commit_after_it_as_statsd_receives_them(statsd):
    tags = metrics.job_tags("trips", "hudi_ingest__trips", "ingest")
    metrics.retried(tags, 1)  # a first try is no retry
    metrics.failed(tags, 3, "WriteConflictError", 41_000.0)
    metrics.retried(tags, 2)
    metrics.ran(tags, {"commits": 2, "rows": 10, "durations_ms": {
        "total": 25_000.0, "catalog_sync": 1_000.0, "session_start": 3_000.0, "fence_wait": 120.0}}, 40_000.0)
    metrics.ran(tags, {"outcome": "completed", "durations_ms": {"total": 5.0}}, 9_000.0)  # a service's result
    got = statsd.wait_for("airflow.hudi_ops.job_commits", count=2)
    statsd.wait_for("airflow.hudi_ops.job_duration", count=3)
    assert [(m.value, m.tags) for m in got] == [(2.0, tags), (1.0, tags)]
    by_name = {}
    for m in statsd.metrics("airflow.hudi_ops."):
        by_name.setdefault(m.name.removeprefix("airflow.hudi_ops."), []).append((m.kind, m.value))
    assert by_name["job_retries"] == [("c", 1.0)]
    assert by_name["job_conflicts"] == [("c", 1.0)] and by_name["job_failures"] == [("c", 1.0)]
    assert by_name["job_duration"] == [("ms", 41_000.0), ("ms", 40_000.0), ("ms", 9_000.0)]
    # the work less the session's start, which every run pays: that goes with the fixed part
    assert by_name["job_work"][0] == ("ms", 23_000.0) and by_name["job_fixed"][0] == ("ms", 17_000.0)
    assert by_name["job_fence_wait"] == [("ms", 120.0)] and by_name["job_rows"] == [("c", 10.0)]
    (conflict,) = statsd.metrics("airflow.hudi_ops.job_conflicts")
    assert conflict.tags == {**tags, "error": "WriteConflictError"}


def test_a_tables_gauges_and_a_group_ticks_as_statsd_receives_them(statsd):
    now = dt.datetime(2026, 11, 29, 12, 0, tzinfo=dt.UTC)
    need = TableNeed(log_files=(0, 1, 1, 2, 9), small_files=1, slices=4, pending_plans=2,
                     oldest_pending_plan=now - dt.timedelta(minutes=30), latest_ingest=now - dt.timedelta(seconds=90))
    metrics.table_measured("trips", need, now=now)
    metrics.group_ticked("fleet", {"trips/clean": 2, "gone/compaction": 1}, {"trips/clean": 3},
                         [("other", "compaction")], 1)
    statsd.wait_for("airflow.hudi_ops.group_unmeasured")
    gauges = {m.name.removeprefix("airflow.hudi_ops."): m.value for m in statsd.metrics("airflow.hudi_ops.")
              if m.kind == "g" and m.tags == {"table": "trips"}}
    assert gauges == {"table_freshness_lag": 90.0, "table_latest_ingest": (now.timestamp() - 90),
                      "table_log_files_p50": 1.0, "table_log_files_p99": 9.0, "table_small_file_share": 0.25,
                      "table_pending_plans": 2.0, "table_pending_plan_age": 1800.0}
    # a pair that ran, or is no longer due, waits no more
    waiting = {(m.tags["table"], m.tags["service"]): m.value for m in statsd.metrics("airflow.hudi_ops.group_waiting")}
    assert waiting == {("trips", "clean"): 3, ("gone", "compaction"): 0, ("other", "compaction"): 0}
    (picked,) = statsd.metrics("airflow.hudi_ops.group_picked")
    assert (picked.tags, picked.value) == ({"group": "fleet", "table": "other", "service": "compaction"}, 1.0)
