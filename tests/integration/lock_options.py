"""Writer options for Hudi's optimistic concurrency with the session's ZooKeeper, as the Airflow hook
makes them, plus heartbeats short enough that a failed writer's instant expires within a test."""

from __future__ import annotations

import uuid
from collections.abc import Mapping

from hudi_ops.locks.occ_options import CONCURRENCY_MODE, with_lock, zookeeper_lock_options

HEARTBEAT = {"hoodie.client.heartbeat.interval_in_ms": "1000", "hoodie.client.heartbeat.tolerable.misses": "2"}
#: how long after its writer stopped a pending instant's heartbeat has surely expired
HEARTBEAT_EXPIRY_S = 4.0


def occ_options(zookeeper_url: str, table: str | None = None,
                table_options: Mapping[str, str] | None = None) -> dict[str, str]:
    """A fresh lock znode per table, so tests sharing one server never wait on each other; with the
    table's own `table_options` as the hook adds them."""
    host, port = zookeeper_url.rsplit(":", 1)
    table_options = dict(table_options or {})
    lock = zookeeper_lock_options(host, int(port), {"base_path": "/hudi-ops-tests", "session_timeout_ms": "10000"},
                                  table or f"t-{uuid.uuid4().hex[:12]}", table_options.get(CONCURRENCY_MODE))
    return {**with_lock(table_options, lock), **HEARTBEAT}


def as_flags(options: dict[str, str]) -> list[str]:
    return [arg for key, value in sorted(options.items()) for arg in ("--hoodie-conf", f"{key}={value}")]
