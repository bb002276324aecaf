"""A services group's tick, as its DAG's `plan` task runs it (hudi_ops.airflow.dag_factory.factory builds the DAG).

Each run of `hudi_services_group__<group>` is a tick: `plan` measures every member table once, without
a JVM and concurrently (hudi_ops.read.table_need), ranks the due (table, service) pairs by the group's
policy (hudi_ops.fleet) and returns the picked pairs' task arguments, at most the budget of them and
one per table; the mapped `service` task runs each as the same spark-submit job a table's own services
DAG would. The DAG's `max_active_tasks` holds the jobs to the budget, `max_active_runs=1` keeps the
ticks in turn, so a table's services never run at once. What the policies remember between ticks (how
long a pair has waited, when a table was last serviced, its recent runs) is an Airflow Variable named
after the group (`state_key`), which the UI lists; deleting it starts the group afresh.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import time
from collections.abc import Mapping
from typing import Any

from croniter import croniter  # Airflow's own cron library, installed with it

from hudi_ops.airflow import metrics
from hudi_ops.airflow.hooks.aws import table_s3
from hudi_ops.errors import HudiOpsError
from hudi_ops.fleet.scheduler import GroupState, Member, measure_all, plan_tick
from hudi_ops.read.table_need import TableNeed

log = logging.getLogger(__name__)
GROUP_DAG_PREFIX = "hudi_services_group__"


def group_dag_id(group: str) -> str:
    return GROUP_DAG_PREFIX + group


def state_key(group: str) -> str:
    return f"hudi_ops.services_group.{group}"


def plan_group_tick(*, group: str, policy: str, budget: int, tables: Mapping[str, Mapping[str, Any]]) -> list[dict]:
    """The `plan` task: the arguments of the service tasks this tick runs, most needed first.

    `tables`: per member table its `base_path`, `aws_conn_id`, `priority`, `quota`, `schedule` (its own
    cron, which the `cron` policy follows; None: every tick) and `tasks` (per service it runs, that
    service's task arguments)."""
    from airflow.sdk import Variable

    state = kept_state(group, Variable.get(state_key(group), default=None))
    members, unreachable = {}, {}
    for name, t in tables.items():
        try:
            s3 = table_s3(t["aws_conn_id"])
        except HudiOpsError as e:  # its connection: that table waits, the others are served
            unreachable[name] = f"{type(e).__name__}: {e}"
            continue
        members[name] = Member(name, t["base_path"], {s: a["hoodie_conf"] for s, a in t["tasks"].items()},
                               t["priority"], t["quota"], s3, ingests=t.get("ingests", False))
    started = time.monotonic()
    needs = {**measure_all(members), **unreachable}
    now = time.time()
    chosen, after = plan_tick(state, members, needs, policy=policy, budget=budget, at=now,
                              cron_due=lambda name: cron_fired(tables[name]["schedule"], state.at, now))
    log.info("measured %d table(s) in %.2f s", len(needs), time.monotonic() - started)
    for name, need in sorted(needs.items()):
        if isinstance(need, str):
            log.warning("%s could not be measured; it waits for a later tick: %s", name, need)
        elif need.due():
            log.info("%s needs %s: %d log file(s) in its fullest file slice, %d of %d slices small, %d plan(s) "
                     "pending", name, ", ".join(need.due()), need.max_log_files, need.small_files, need.slices,
                     need.pending_plans)
    for c in chosen:
        log.info("runs %s of %s: need %.2f, priority %g, waited %d tick(s)", c.service, c.table, c.need,
                 c.priority, c.waited)
    for key, ticks in sorted(after.waited.items()):
        log.info("waits: %s, due for %d tick(s)", key, ticks)
    at = dt.datetime.fromtimestamp(now, dt.UTC)
    for name, need in needs.items():
        if not isinstance(need, str):
            metrics.table_measured(name, need, now=at)
    metrics.group_ticked(group, state.waited, after.waited, [(c.table, c.service) for c in chosen],
                         sum(isinstance(n, str) for n in needs.values()))
    Variable.set(state_key(group), after.to_dict(), serialize_json=True)
    return [{**tables[c.table]["tasks"][c.service], "mode": _mode(needs[c.table], c.service)} for c in chosen]


def kept_state(group: str, raw: str | None) -> GroupState:
    """The state the last tick kept in the Variable; one that cannot be read (edited by hand, say) is
    logged and the group starts afresh rather than stop."""
    if raw is None:
        return GroupState()
    try:
        return GroupState.from_dict(json.loads(raw))
    except (ValueError, TypeError, KeyError, AttributeError) as e:
        log.warning("the Variable %s is not a state this group wrote (%s: %s); starting afresh",
                    state_key(group), type(e).__name__, e)
        return GroupState()


def cron_fired(cron: str | None, since: float, now: float) -> bool:
    """Whether a table's own schedule fired since the group's last tick (the `cron` policy's turn)."""
    if cron is None or since <= 0:
        return True
    start = dt.datetime.fromtimestamp(since, dt.UTC)
    return croniter(cron, start).get_next(float) <= now


def _mode(need: TableNeed | str, service: str) -> str:
    """A pending plan is executed first (a failed run's, or one scheduled elsewhere); else plan and run."""
    if not isinstance(need, str) and service in need.executes:
        return "execute"
    return "scheduleAndExecute"
