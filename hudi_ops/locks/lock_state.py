"""Who holds a table's ZooKeeper lock now, and how many wait for it: read live, for people.

Hudi's Java writers leave their host's address (Hudi 1.1) or `application_id=<Spark application>`
(later releases) in their lock node, shown with the holder.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from hudi_ops.locks.zookeeper import ZookeeperBasedLockProvider
from hudi_ops.options.config_property import HoodieConfig
from hudi_ops.options.keys import LOCK_NUM_RETRIES, ZK_CONNECTION_TIMEOUT_MS

#: a page must not wait out a writer's patience when ZooKeeper is down
_QUICK = {ZK_CONNECTION_TIMEOUT_MS.name: "3000", LOCK_NUM_RETRIES.name: "0"}


@dataclass(frozen=True)
class LockState:
    lock: str  # `<ZooKeeper url><znode>`, or "" without a ZooKeeper lock
    holder: str | None = None  # the holder's lock node
    holder_data: str = ""  # what the holder wrote into its node (Hudi: its host, or its Spark application)
    waiting: int = 0
    error: str | None = None

    def describe(self) -> str:
        if self.error:
            return f"lock state unknown: {self.error}"
        if not self.lock:
            return "no ZooKeeper lock configured: a single writer"
        if self.holder is None:
            return f"lock {self.lock}: free"
        data = f" ({self.holder_data})" if self.holder_data else ""
        return f"lock {self.lock}: held by {self.holder}{data}, {self.waiting} writer(s) waiting"


def lock_state(options: Mapping[str, str], table_name: str) -> LockState:
    """The lock the `hoodie.write.lock.zookeeper.*` options name; no options: a single writer. A
    ZooKeeper that is down is a state to show, not an error to raise."""
    if not options:
        return LockState("")
    try:
        provider = ZookeeperBasedLockProvider.from_config(HoodieConfig({**options, **_QUICK}), table_name=table_name)
        try:
            queue = provider.queue()
            data = provider.node_data(queue[0]) if queue else ""
        finally:
            provider.close()
    except Exception as e:
        return LockState("", error=f"{type(e).__name__}: {e}")
    lock = provider.url + provider.lock_path
    return LockState(lock, queue[0], data, len(queue) - 1) if queue else LockState(lock)
