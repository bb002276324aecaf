"""Rolling back failed writes (LAZY) without harm: one process at a time, and never a write that is
only starting.

Hudi's clean rolls back every pending write whose heartbeat expired. Two processes doing that at once
fail each other (one deletes the instant the other is about to), and a write whose heartbeat file is
not there yet counts as expired. So a clean or rollback-failed job holds the cleaner's lock and first
waits until every pending write either beats or has been silent for a whole heartbeat expiry.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator, Mapping

from hudi_ops.config import FailedWritesConfig, HoodieConfig
from hudi_ops.format.meta_client import MetaClient
from hudi_ops.locks.job_locks import cleaner_lock, has_zookeeper_lock
from hudi_ops.read.service_work import starting_writes

#: how long a clean waits for another clean or rollback of the table: a long clean's length
CLEANER_WAIT_S = 600.0
_POLL_S = 0.1


@contextlib.contextmanager
def rollback_guard(meta: MetaClient, options: Mapping[str, str]) -> Iterator[tuple[str, ...]]:
    """The block may roll back failed writes; yields the warnings to report."""
    config = HoodieConfig(dict(options))
    if config.get(FailedWritesConfig.POLICY) != "LAZY":  # EAGER: Hudi's clean rolls nothing back
        yield ()
        return
    if has_zookeeper_lock(options):
        guard: contextlib.AbstractContextManager[object] = cleaner_lock(
            options, meta.properties.table_name, CLEANER_WAIT_S)
        warnings: tuple[str, ...] = ()
    else:
        guard = contextlib.nullcontext()
        warnings = ("no ZooKeeper lock is configured: nothing stops another process from rolling back the same "
                    "failed writes at the same time",)
    with guard:
        while starting_writes(meta, config):  # each one beats or ages past the expiry: the loop ends
            time.sleep(_POLL_S)
        yield warnings
