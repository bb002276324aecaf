"""Writer options selecting each cross-process lock provider the multi-writer tests run with."""

from __future__ import annotations

import uuid

FS_LOCK = {"hoodie.write.lock.provider": "org.apache.hudi.client.transaction.lock.FileSystemBasedLockProvider"}


def zookeeper_lock(url: str) -> dict[str, str]:
    """A fresh lock znode per table, so tests sharing one server never wait on each other."""
    return {
        "hoodie.write.lock.provider": "org.apache.hudi.client.transaction.lock.ZookeeperBasedLockProvider",
        "hoodie.write.lock.zookeeper.url": url,
        "hoodie.write.lock.zookeeper.base_path": "/hudi-ops-tests",
        "hoodie.write.lock.zookeeper.lock_key": f"t-{uuid.uuid4().hex[:12]}",
        "hoodie.write.lock.zookeeper.session_timeout_ms": "10000",
    }
