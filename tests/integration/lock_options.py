"""Writer options for Hudi's optimistic concurrency with the session's ZooKeeper, as the Airflow hook
makes them, plus heartbeats short enough that a failed writer's instant expires within a test."""

from __future__ import annotations

import time
import uuid
from collections.abc import Mapping
from pathlib import Path

from hudi_ops.format.meta_client import MetaClient
from hudi_ops.options.config_property import HoodieConfig
from hudi_ops.options.keys import WriteConfig
from hudi_ops.options.occ import zookeeper_lock_options
from hudi_ops.read.heartbeats import live_writes

#: a failed writer's instant expires 6 s after its last beat (Hudi: 60 s x 2 misses); a live writer on two
#: busy cores still beats in time (with 1 s x 2 one could miss two beats under load, and be rolled back)
HEARTBEAT = {"hoodie.client.heartbeat.interval_in_ms": "2000", "hoodie.client.heartbeat.tolerable.misses": "3"}


def await_stopped_writes_expired(table: Path | str, timeout_s: float = 60) -> None:
    """Until no pending write of `table` has a live heartbeat: the writers that stopped (killed, or lost a
    conflict) left failed writes, which Hudi's next writer rolls back (LAZY) instead of waiting for them."""
    config, deadline = HoodieConfig(HEARTBEAT), time.monotonic() + timeout_s
    while alive := live_writes(MetaClient.open(str(table)), config):
        assert time.monotonic() < deadline, f"writes of {table} still beat after {timeout_s:g}s: {alive}"
        time.sleep(0.2)


def occ_options(zookeeper_url: str, table: str | None = None,
                table_options: Mapping[str, str] | None = None) -> dict[str, str]:
    """A fresh lock znode per table, so tests sharing one server never wait on each other; with the
    table's own `table_options` as the hook adds them (the job puts hudi-ops' defaults under them)."""
    host, port = zookeeper_url.rsplit(":", 1)
    table_options = dict(table_options or {})
    lock = zookeeper_lock_options(host, int(port), {"base_path": "/hudi-ops-tests", "session_timeout_ms": "10000"},
                                  table or f"t-{uuid.uuid4().hex[:12]}",
                                  table_options.get(WriteConfig.CONCURRENCY_MODE.name))
    return {**table_options, **lock, **HEARTBEAT}


def as_flags(options: dict[str, str]) -> list[str]:
    return [arg for key, value in sorted(options.items()) for arg in ("--hoodie-conf", f"{key}={value}")]
