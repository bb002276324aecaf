"""Who holds a table's ZooKeeper lock now, and how many writers wait for it, for the timeline view."""

from __future__ import annotations

from dataclasses import dataclass

from hudi_ops.airflow.hook import HudiHook
from hudi_ops.concurrency.locks.zookeeper import (
    LOCK_NUM_RETRIES,
    ZK_CONNECTION_TIMEOUT_MS,
    ZookeeperBasedLockProvider,
)
from hudi_ops.config import HoodieConfig

#: a page must not wait out a writer's patience when ZooKeeper is down
_QUICK = {ZK_CONNECTION_TIMEOUT_MS.name: "3000", LOCK_NUM_RETRIES.name: "0"}


@dataclass(frozen=True)
class LockState:
    lock: str  # `<ZooKeeper url><znode>`, or "" without a ZooKeeper connection
    holder: str | None = None  # the holder's lock node
    waiting: int = 0
    error: str | None = None

    def describe(self) -> str:
        if self.error:
            return f"lock state unknown: {self.error}"
        if not self.lock:
            return "no ZooKeeper lock configured: a single writer"
        if self.holder is None:
            return f"lock {self.lock}: free"
        return f"lock {self.lock}: held by {self.holder}, {self.waiting} writer(s) waiting"


def lock_state(table: str, zookeeper_conn_id: str | None) -> LockState:
    try:
        options = HudiHook(table, zookeeper_conn_id=zookeeper_conn_id).lock_options()
        if not options:
            return LockState("")
        provider = ZookeeperBasedLockProvider.from_config(HoodieConfig({**options, **_QUICK}), table_name=table)
        try:
            queue = provider.queue()
        finally:
            provider.close()
    except Exception as e:  # a missing connection or a down ZooKeeper is a state to show, not an error page
        return LockState("", error=f"{type(e).__name__}: {e}")
    lock = provider.url + provider.lock_path
    return LockState(lock, queue[0], len(queue) - 1) if queue else LockState(lock)
