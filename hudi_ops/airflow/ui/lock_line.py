"""The lock line of the timeline view: a table's lock, named by its Airflow ZooKeeper connection."""

from __future__ import annotations

from hudi_ops.airflow.hooks.zookeeper_lock import ZookeeperLockHook
from hudi_ops.locks.lock_state import LockState, lock_state


def table_lock_state(table: str, zookeeper_conn_id: str | None) -> LockState:
    try:
        options = ZookeeperLockHook(table, zookeeper_conn_id=zookeeper_conn_id).lock_options()
    except Exception as e:  # a missing or broken connection is a state to show, not an error page
        return LockState("", error=f"{type(e).__name__}: {e}")
    return lock_state(options, table)
