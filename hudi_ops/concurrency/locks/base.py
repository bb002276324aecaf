"""The lock provider protocol: mutual exclusion around a table's critical sections.

Writers hold the lock to generate instant times and to check conflicts and publish a completed
instant (RFC-22). A provider whose lock can be lost while held (a ZooKeeper session expiring)
reports it through `assert_held`, which a writer calls right before it publishes anything.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Protocol

from hudi_ops.config import int_key

LOCK_WAIT_MS = int_key("hoodie.write.lock.wait_time_ms", 60_000, minimum=0)


class LockProvider(Protocol):
    #: what the lock is called where it lives (znode, file), for error messages
    lock_path: str

    def acquire(self, timeout_s: float) -> None:
        """Take the lock or raise LockAcquisitionError naming `lock_path` once `timeout_s` has passed."""
        ...

    def release(self) -> None: ...

    def assert_held(self) -> None:
        """Raise LockAcquisitionError if the lock was lost since it was acquired."""
        ...

    def close(self) -> None: ...


@contextmanager
def locked(provider: LockProvider, timeout_s: float) -> Iterator[LockProvider]:
    provider.acquire(timeout_s)
    try:
        yield provider
    finally:
        provider.release()
