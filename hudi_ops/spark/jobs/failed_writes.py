"""Rolling back failed writes (LAZY) without harm: one process at a time, and never a write that is
only starting.

Hudi's clean rolls back every pending write whose heartbeat expired. Two processes doing that at once
fail each other (one deletes the instant the other is about to), and a write whose heartbeat file is
not there yet counts as expired. So a clean or rollback-failed job holds the cleaner's lock, and right
before Hudi rolls anything back it waits until every pending write either beats or has been silent
for a whole heartbeat expiry.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

from hudi_ops.format.meta_client import MetaClient
from hudi_ops.locks.job_locks import cleaner_lock
from hudi_ops.options.config_property import HoodieConfig
from hudi_ops.options.keys import FailedWritesConfig
from hudi_ops.options.occ import has_zookeeper_lock
from hudi_ops.read.heartbeats import starting_writes

#: how long a clean waits for another clean or rollback of the table: a long clean's length
CLEANER_WAIT_S = 600.0
_POLL_S = 0.1


@dataclass(frozen=True)
class RollbackTurn:
    """This process's turn to roll back failed writes; `warnings` are for the job's result."""

    meta: MetaClient
    config: HoodieConfig
    lazy: bool  # EAGER: Hudi's clean rolls nothing back
    warnings: tuple[str, ...] = ()

    def spare_starting_writes(self) -> None:
        """Call right before Hudi's rollback: returns once no pending write is between its requested
        instant and its first heartbeat (each one beats or ages past the expiry, so this ends)."""
        while self.lazy and starting_writes(self.meta.reload(), self.config):
            time.sleep(_POLL_S)


@contextlib.contextmanager
def rollback_turn(meta: MetaClient, options: Mapping[str, str]) -> Iterator[RollbackTurn]:
    """The block may roll back failed writes: it holds the cleaner's lock when there is a ZooKeeper lock."""
    config = HoodieConfig(dict(options))
    if config.get(FailedWritesConfig.POLICY) != "LAZY":
        yield RollbackTurn(meta, config, lazy=False)
    elif has_zookeeper_lock(options):
        with cleaner_lock(options, meta.properties.table_name, CLEANER_WAIT_S):
            yield RollbackTurn(meta, config, lazy=True)
    else:
        yield RollbackTurn(meta, config, True, ("no ZooKeeper lock is configured: nothing stops another process from "
                                          "rolling back the same failed writes at the same time",))
