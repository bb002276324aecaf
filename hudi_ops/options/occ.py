"""The `hoodie.*` options that make Hudi's writers and services take a table's ZooKeeper lock (RFC-22 OCC),
built from the table's ZooKeeper connection. hudi-ops' defaults for every job of such a table:
hudi_ops.options.job_defaults."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hudi_ops.errors import ConfigError
from hudi_ops.options.keys import (
    ZK_BASE_PATH,
    ZK_CONNECTION_TIMEOUT_MS,
    ZK_LOCK_KEY,
    ZK_SESSION_TIMEOUT_MS,
    ZK_URL,
    FailedWritesConfig,
    IndexConfig,
    LockConfig,
    WriteConfig,
)

ZOOKEEPER_LOCK_PROVIDER = "org.apache.hudi.client.transaction.lock.ZookeeperBasedLockProvider"
DEFAULT_LOCK_BASE_PATH = "/hudi/locks"
OPTIMISTIC, NON_BLOCKING = "OPTIMISTIC_CONCURRENCY_CONTROL", "NON_BLOCKING_CONCURRENCY_CONTROL"
PREFER_WRITER = "org.apache.hudi.client.transaction.PreferWriterConflictResolutionStrategy"
#: What a table's ZooKeeper lock implies: Hudi's ZooKeeper lock provider, optimistic concurrency, and
#: failed writes rolled back by a later job once their heartbeat expired (LAZY), never eagerly by a
#: writer that cannot know whether another is still at work.
LOCK_IMPLIES = {LockConfig.PROVIDER.name: ZOOKEEPER_LOCK_PROVIDER, WriteConfig.CONCURRENCY_MODE.name: OPTIMISTIC,
                FailedWritesConfig.POLICY.name: "LAZY"}


def has_zookeeper_lock(options: Mapping[str, str]) -> bool:
    """Whether `options` name a ZooKeeper lock: the table has several writers (and services) at once."""
    return bool(options.get(ZK_URL.name))


def is_simple_bucket_index(options: Mapping[str, str]) -> bool:
    """Whether `options` choose Hudi's simple bucket index, whose file groups are fixed per bucket."""
    return (str(options.get(IndexConfig.TYPE.name, "")).strip().upper() == "BUCKET"
            and str(options.get(IndexConfig.BUCKET_ENGINE.name, "SIMPLE")).strip().upper() == "SIMPLE")


def multi_writer_mode(value: str | None) -> str:
    """The concurrency mode a table with a lock runs: optimistic (the default) or non-blocking."""
    mode = (value or OPTIMISTIC).strip().upper()
    if mode not in (OPTIMISTIC, NON_BLOCKING):
        raise ConfigError(f"{WriteConfig.CONCURRENCY_MODE.name}={value} cannot share a table's lock with other "
                          f"writers; use {OPTIMISTIC} (the default) or {NON_BLOCKING}, or drop the setting")
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
        WriteConfig.CONCURRENCY_MODE.name: mode,
        ZK_URL.name: url,
        ZK_BASE_PATH.name: str(extra.get("base_path") or DEFAULT_LOCK_BASE_PATH),
        ZK_LOCK_KEY.name: str(extra.get("lock_key") or table_name),
        **{key.name: str(extra[field]) for field, key in (("session_timeout_ms", ZK_SESSION_TIMEOUT_MS),
                                                          ("connection_timeout_ms", ZK_CONNECTION_TIMEOUT_MS))
           if field in extra},
    }
