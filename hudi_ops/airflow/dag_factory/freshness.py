"""A table's freshness goal (`freshness:` minutes in the tables config) as Airflow 3's deadline alert on
its ingest DAG, and the lag the fleet page and the metrics compare with it.

The deadline is the run's: queued at Q, an ingest run that has not ended by Q + goal missed it, so the
data that reached the source before Q was not in the table within the goal. Airflow's scheduler marks
the deadline missed (its `deadline_alerts.deadline_missed` metric, tag dag_id), and runs the callback
below in the triggerer, which logs which table is late and by how much. A run that never starts (the
DAG paused, the scheduler down) misses no deadline: the table's lag since its latest ingest, on the
fleet page and in the `hudi_ops.table_freshness_lag` gauge, tells that case.
"""

from __future__ import annotations

import datetime as dt
import logging
from typing import Any

from airflow.sdk import AsyncCallback, DeadlineAlert, DeadlineReference

log = logging.getLogger(__name__)

def freshness_deadline(table: str, goal_minutes: float) -> DeadlineAlert:
    """The ingest DAG's deadline: every run ends within the goal of being queued."""
    return DeadlineAlert(
        reference=DeadlineReference.DAGRUN_QUEUED_AT, interval=dt.timedelta(minutes=goal_minutes),
        callback=AsyncCallback(table_late, kwargs={"table": table, "goal_minutes": goal_minutes}))


async def table_late(table: str, goal_minutes: float, context: dict[str, Any] | None = None, **_: Any) -> None:
    """The callback Airflow's triggerer runs when an ingest run missed its deadline: a warning naming the
    table, the run and the goal (a notifier of Airflow's, in a DAG's own `deadline`, can page someone)."""
    run = (context or {}).get("dag_run") or {}  # the run as Airflow's REST API serves it
    deadline = (context or {}).get("deadline") or {}
    log.warning("table %s is late: ingest run %s of %s (queued %s) had not ended by %s, its freshness goal of "
                "%g minute(s)", table, run.get("dag_run_id"), run.get("dag_id"), run.get("queued_at"),
                deadline.get("deadline_time"), goal_minutes)


def late(lag: dt.timedelta | None, goal_minutes: float | None) -> bool | None:
    """Whether a table whose latest ingest is `lag` old is past its goal; None without a goal, or before
    its first ingest."""
    if goal_minutes is None or lag is None:
        return None
    return lag > dt.timedelta(minutes=goal_minutes)
