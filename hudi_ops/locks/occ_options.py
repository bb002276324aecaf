"""The `hoodie.*` options that make Hudi's writers and services take a table's ZooKeeper lock (RFC-22 OCC),
built from the table's ZooKeeper connection. hudi-ops' defaults for every job of such a table:
hudi_ops.locks.job_options."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hudi_ops.errors import ConfigError

ZOOKEEPER_LOCK_PROVIDER = "org.apache.hudi.client.transaction.lock.ZookeeperBasedLockProvider"
DEFAULT_LOCK_BASE_PATH = "/hudi/locks"
CONCURRENCY_MODE = "hoodie.write.concurrency.mode"
OPTIMISTIC, NON_BLOCKING = "OPTIMISTIC_CONCURRENCY_CONTROL", "NON_BLOCKING_CONCURRENCY_CONTROL"
CLUSTERING_UPDATES_STRATEGY = "hoodie.clustering.updates.strategy"
CONFLICT_RESOLUTION_STRATEGY = "hoodie.write.lock.conflict.resolution.strategy"
PREFER_WRITER = "org.apache.hudi.client.transaction.PreferWriterConflictResolutionStrategy"
INDEX_TYPE = "hoodie.index.type"
BUCKET_ENGINE = "hoodie.index.bucket.engine"
LOCK_PROVIDER = "hoodie.write.lock.provider"
FAILED_WRITES_POLICY = "hoodie.cleaner.policy.failed.writes"
#: What a table's ZooKeeper lock implies: Hudi's ZooKeeper lock provider, optimistic concurrency, and
#: failed writes rolled back by a later job once their heartbeat expired (LAZY), never eagerly by a
#: writer that cannot know whether another is still at work.
LOCK_IMPLIES = {LOCK_PROVIDER: ZOOKEEPER_LOCK_PROVIDER, CONCURRENCY_MODE: OPTIMISTIC, FAILED_WRITES_POLICY: "LAZY"}


def is_simple_bucket_index(options: Mapping[str, str]) -> bool:
    """Whether `options` choose Hudi's simple bucket index, whose file groups are fixed per bucket."""
    return (str(options.get(INDEX_TYPE, "")).strip().upper() == "BUCKET"
            and str(options.get(BUCKET_ENGINE, "SIMPLE")).strip().upper() == "SIMPLE")


def multi_writer_mode(value: str | None) -> str:
    """The concurrency mode a table with a lock runs: optimistic (the default) or non-blocking."""
    mode = (value or OPTIMISTIC).strip().upper()
    if mode not in (OPTIMISTIC, NON_BLOCKING):
        raise ConfigError(f"{CONCURRENCY_MODE}={value} cannot share a table's lock with other writers; "
                          f"use {OPTIMISTIC} (the default) or {NON_BLOCKING}, or drop the setting")
    return mode


def zookeeper_lock_options(
    host: str, port: int | None, extra: Mapping[str, Any], table_name: str, concurrency_mode: str | None = None
) -> dict[str, str]:
    """`host` names one host or several (comma-separated), each with or without a port; `port` completes
    the others, because Hudi hands the url to Curator as it is and never reads a port key. `extra`
    may set `base_path`, `lock_key` (default: the table's name), `session_timeout_ms` and
    `connection_timeout_ms`. `concurrency_mode`: the table's own choice of Hudi's multi-writer modes,
    optimistic (the default) or non-blocking; both take the lock to commit."""
    mode = multi_writer_mode(concurrency_mode)
    hosts = [h.strip() for h in host.split(",") if h.strip()]
    if not hosts:
        raise ConfigError("the ZooKeeper connection has no host; set it to the ensemble's host name(s)")
    # the connection's port completes the hosts that name none (`connect_string` instead refuses a
    # separate port key, which Hudi would ignore)
    url = ",".join(h if ":" in h or port is None else f"{h}:{port}" for h in hosts)
    return {
        **LOCK_IMPLIES,
        CONCURRENCY_MODE: mode,
        "hoodie.write.lock.zookeeper.url": url,
        "hoodie.write.lock.zookeeper.base_path": str(extra.get("base_path") or DEFAULT_LOCK_BASE_PATH),
        "hoodie.write.lock.zookeeper.lock_key": str(extra.get("lock_key") or table_name),
        **{f"hoodie.write.lock.zookeeper.{k}": str(v) for k, v in extra.items()
           if k in ("session_timeout_ms", "connection_timeout_ms")},
    }
