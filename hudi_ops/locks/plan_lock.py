"""One plan, one executor: a ZooKeeper lock per compaction or clustering plan.

Hudi takes the table's lock only to schedule a plan and to commit its result; the execution between
runs unlocked, so two executors of one plan (an Airflow retry overlapping a slow attempt, two runs of
a services DAG) would rewrite the same file groups at once, which can corrupt the table (apache/hudi
PR #18012). The executor of a plan holds `<base_path>/<lock_key>.<service>.<instant>` (beside the
table's lock node, never under it: Hudi's lock treats every child there as a contender) for the whole
execution; a second executor waits for it, then finds the plan's outcome on the timeline.
"""

from __future__ import annotations

from collections.abc import Mapping

from hudi_ops.config import HoodieConfig, WriteConfig
from hudi_ops.locks.held_lock import HeldLock
from hudi_ops.locks.zookeeper import ZK_LOCK_KEY, ZK_URL


def has_zookeeper_lock(options: Mapping[str, str]) -> bool:
    return bool(options.get(ZK_URL.name))


def plan_lock(options: Mapping[str, str], table_name: str, service: str, instant: str, wait_s: float) -> HeldLock:
    """`with plan_lock(options, table, "compaction", instant, wait_s): execute the plan`."""
    config = HoodieConfig(dict(options))
    table_key = config.get(ZK_LOCK_KEY) or config.get(WriteConfig.TABLE_NAME) or table_name
    return HeldLock({**options, ZK_LOCK_KEY.name: f"{table_key}.{service}.{instant}"}, table_name, wait_s=wait_s,
                    transient=True)
