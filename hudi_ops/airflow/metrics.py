"""hudi-ops' own metrics, sent through Airflow's metrics (StatsD, Datadog's or OpenTelemetry, as the
Airflow installation's `[metrics]` section sets them up; nothing when it sets none up).

Every name below is in docs/metrics.md with its type and tags. The operators send what a task did
(`job_*`), the services DAGs and a services group's tick what they measured of a table (`table_*`) and
of the group (`group_*`). Tags: `table`, `pipeline` (the DAG's id) and `job` (hudi-ops' job: ingest,
backfill, compact, ...), and the few a name adds. StatsD has no tags of its own: Airflow appends them
to the name InfluxDB's way with `[metrics] statsd_influxdb_enabled = True`; Datadog's and
OpenTelemetry's carry them as they are.
"""

from __future__ import annotations

import datetime as dt
import functools
import logging
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

# the task SDK's: the task runner sets it up from `[metrics]` (its class form is in every SDK since Airflow 3.2)
from airflow.sdk.observability.stats import Stats as _stats

from hudi_ops.read.table_need import TableNeed

log = logging.getLogger(__name__)
F = TypeVar("F", bound=Callable[..., Any])

PREFIX = "hudi_ops."

# a task's run (hudi_ops.airflow.operators.spark_jobs), tags table, pipeline, job
COMMITS = PREFIX + "job_commits"  # counter: commits the run made
ROWS = PREFIX + "job_rows"  # counter: records it inserted, updated or deleted
CONFLICTS = PREFIX + "job_conflicts"  # counter, tag error: exit 3, which Airflow retries
FAILURES = PREFIX + "job_failures"  # counter, tag exit_code: every failed try, conflicts too
RETRIES = PREFIX + "job_retries"  # counter: a try after the first began
SKIPPED = PREFIX + "job_skipped"  # counter: the control plane found nothing to do
DURATION = PREFIX + "job_duration"  # timer: spark-submit, start to end
WORK = PREFIX + "job_work"  # timer: the job's own work (its result's durations, less the session's start)
FIXED = PREFIX + "job_fixed"  # timer: the rest: spark-submit, the JVM, the Spark session, the fence
WAITS = {"fence_wait": PREFIX + "job_fence_wait", "lock_wait": PREFIX + "job_lock_wait"}  # timers
# a table as measured (hudi_ops.read.table_need), tag table
FRESHNESS_LAG = PREFIX + "table_freshness_lag"  # gauge, seconds since the latest completed ingest
LATEST_INGEST = PREFIX + "table_latest_ingest"  # gauge, epoch seconds: that ingest's completion
FRESHNESS_GOAL = PREFIX + "table_freshness_goal"  # gauge, seconds: the table's `freshness` (its ingest's tasks)
LOG_FILES_P50 = PREFIX + "table_log_files_p50"  # gauge: log files per latest file slice, median
LOG_FILES_P99 = PREFIX + "table_log_files_p99"  # gauge: ..., 99th percentile
SMALL_FILE_SHARE = PREFIX + "table_small_file_share"  # gauge, 0..1: latest slices with a small base file
PENDING_PLANS = PREFIX + "table_pending_plans"  # gauge: compaction and clustering plans not executed
PENDING_PLAN_AGE = PREFIX + "table_pending_plan_age"  # gauge, seconds: the oldest pending plan's
# a services group's tick (hudi_ops.airflow.dag_factory.services_group), tag group (and table, service)
GROUP_WAITING = PREFIX + "group_waiting"  # gauge, tags table, service: ticks a due service has waited
GROUP_PICKED = PREFIX + "group_picked"  # counter, tags table, service: services the tick runs
GROUP_UNMEASURED = PREFIX + "group_unmeasured"  # gauge: tables the tick could not read


def _never_fails(fn: F) -> F:
    """A metric that cannot be sent is logged: it never fails the task or the tick that measured it."""

    @functools.wraps(fn)
    def sent(*args: Any, **kwargs: Any) -> None:
        try:
            fn(*args, **kwargs)
        except Exception as e:
            log.warning("hudi-ops' metrics were not sent (%s: %s)", type(e).__name__, e)

    return sent  # type: ignore[return-value]


def job_tags(table: str, pipeline: str, job: str) -> dict[str, str]:
    return {"table": table, "pipeline": pipeline, "job": job}


@_never_fails
def retried(tags: Mapping[str, str], try_number: int) -> None:
    if try_number > 1:
        _stats.incr(RETRIES, tags=dict(tags))


@_never_fails
def skipped(tags: Mapping[str, str]) -> None:
    _stats.incr(SKIPPED, tags=dict(tags))


@_never_fails
def ran(tags: Mapping[str, str], result: Mapping[str, object], duration_ms: float) -> None:
    """A run that ended well: what it committed and where its time went."""
    tags = dict(tags)
    commits = result.get("commits")
    if commits is None:  # a service: one commit when it completed its instant
        commits = 1 if result.get("outcome") == "completed" else 0
    if commits:
        _stats.incr(COMMITS, int(commits), tags=tags)  # type: ignore[arg-type]
    if rows := int(result.get("rows") or 0):  # type: ignore[call-overload]
        _stats.incr(ROWS, rows, tags=tags)
    _timings(tags, result.get("durations_ms") or {}, duration_ms)  # type: ignore[arg-type]


@_never_fails
def failed(tags: Mapping[str, str], exit_code: int | None, error: str | None, duration_ms: float | None) -> None:
    """A failed try: its exit code (None: the job reported none, killed or failed before it could) and how
    long its spark-submit ran (None: it never started)."""
    tags = dict(tags)
    _stats.incr(FAILURES, tags={**tags, "exit_code": str(exit_code if exit_code is not None else "none")})
    if exit_code == 3:
        _stats.incr(CONFLICTS, tags={**tags, "error": error or "unknown"})
    if duration_ms is not None:
        _stats.timing(DURATION, dt.timedelta(milliseconds=duration_ms), tags=tags)


def _timings(tags: dict[str, str], durations: Mapping[str, float], duration_ms: float) -> None:
    _stats.timing(DURATION, dt.timedelta(milliseconds=duration_ms), tags=tags)
    # the job's own work, less its Spark session's start, which every run pays (hudi_ops.spark.__main__)
    work = float(durations.get("total", 0.0)) + float(durations.get("catalog_sync", 0.0)) - float(
        durations.get("session_start", 0.0))
    if work > 0:
        _stats.timing(WORK, dt.timedelta(milliseconds=work), tags=tags)
        _stats.timing(FIXED, dt.timedelta(milliseconds=max(duration_ms - work, 0.0)), tags=tags)
    for key, name in WAITS.items():
        if key in durations:
            _stats.timing(name, dt.timedelta(milliseconds=float(durations[key])), tags=tags)


@_never_fails
def table_measured(table: str, need: TableNeed, *, now: dt.datetime) -> None:
    """The gauges of one look at a table."""
    tags = {"table": table}
    latest = need.latest_ingest
    if latest is not None:
        _stats.gauge(FRESHNESS_LAG, round((now - latest).total_seconds(), 1), tags=tags)
        # what an alert rule ages by itself (`time() - ...`), however long ago the last look was
        _stats.gauge(LATEST_INGEST, round(latest.timestamp(), 1), tags=tags)
    if need.log_files:
        _stats.gauge(LOG_FILES_P50, need.log_files_percentile(50), tags=tags)
        _stats.gauge(LOG_FILES_P99, need.log_files_percentile(99), tags=tags)
    _stats.gauge(SMALL_FILE_SHARE, round(need.small_file_share, 4), tags=tags)
    _stats.gauge(PENDING_PLANS, need.pending_plans, tags=tags)
    oldest = need.oldest_pending_plan
    _stats.gauge(PENDING_PLAN_AGE, round((now - oldest).total_seconds(), 1) if oldest else 0, tags=tags)


@_never_fails
def freshness_goal(table: str, minutes: float) -> None:
    """The goal the lag is held to, beside it for an alert rule (`lag > goal`)."""
    _stats.gauge(FRESHNESS_GOAL, round(minutes * 60, 1), tags={"table": table})


@_never_fails
def group_ticked(group: str, before: Mapping[str, int], waited: Mapping[str, int], picked: list[tuple[str, str]],
                 unmeasured: int) -> None:
    """A services group's tick: what waits (`table/service` -> ticks; `before`: what waited at the last
    tick, and waits no more unless still in `waited`), what it runs, what it could not read."""
    for key in {*before, *waited, *(f"{t}/{s}" for t, s in picked)}:
        table, _, service = key.partition("/")
        _stats.gauge(GROUP_WAITING, waited.get(key, 0), tags={"group": group, "table": table, "service": service})
    for table, service in picked:
        _stats.incr(GROUP_PICKED, tags={"group": group, "table": table, "service": service})
    _stats.gauge(GROUP_UNMEASURED, unmeasured, tags={"group": group})
