"""The `hoodie.*` options that make Hudi's writers and services take a table's ZooKeeper lock (RFC-22 OCC)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hudi_ops.errors import ConfigError

ZOOKEEPER_LOCK_PROVIDER = "org.apache.hudi.client.transaction.lock.ZookeeperBasedLockProvider"
DEFAULT_LOCK_BASE_PATH = "/hudi/locks"
#: Defaults a table's own options may change. Hudi's lock manager retries a lock it did not get 50
#: more times, 5 s apart, each try waiting `hoodie.write.lock.wait_time_ms`: almost an hour before a
#: job fails. Under Airflow the task's retries (with backoff, and visible) do that job, so the wait
#: is one try: `hoodie.write.lock.wait_time_ms` is how long a writer waits before it exits 4.
LOCK_WAIT_DEFAULTS = {"hoodie.write.lock.client.num_retries": "0"}


def zookeeper_lock_options(
    host: str, port: int | None, extra: Mapping[str, Any], table_name: str
) -> dict[str, str]:
    """`host` names one host or several (comma-separated), each with or without a port; `port` completes
    the others, because Hudi hands the url to Curator as it is and never reads a port key. `extra`
    may set `base_path`, `lock_key` (default: the table's name), `session_timeout_ms` and
    `connection_timeout_ms`."""
    hosts = [h.strip() for h in host.split(",") if h.strip()]
    if not hosts:
        raise ConfigError("the ZooKeeper connection has no host; set it to the ensemble's host name(s)")
    # the connection's port completes the hosts that name none (`connect_string` instead refuses a
    # separate port key, which Hudi would ignore)
    url = ",".join(h if ":" in h or port is None else f"{h}:{port}" for h in hosts)
    return {
        "hoodie.write.concurrency.mode": "OPTIMISTIC_CONCURRENCY_CONTROL",
        # with several writers a failed write is rolled back by the next writer once its heartbeat
        # expires (LAZY), never eagerly by a writer that cannot know whether it is still running
        "hoodie.cleaner.policy.failed.writes": "LAZY",
        "hoodie.write.lock.provider": ZOOKEEPER_LOCK_PROVIDER,
        "hoodie.write.lock.zookeeper.url": url,
        "hoodie.write.lock.zookeeper.base_path": str(extra.get("base_path") or DEFAULT_LOCK_BASE_PATH),
        "hoodie.write.lock.zookeeper.lock_key": str(extra.get("lock_key") or table_name),
        **{f"hoodie.write.lock.zookeeper.{k}": str(v) for k, v in extra.items()
           if k in ("session_timeout_ms", "connection_timeout_ms")},
    }
