"""Lock providers: mutual exclusion around the commit critical section.

`InProcessLockProvider` (Hudi's in-process provider) serialises writers of one table inside one
process; providers for several processes or machines implement the same protocol.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import ClassVar, Protocol

from hudi_ops.errors import LockAcquisitionError


class LockProvider(Protocol):
    def acquire(self, timeout_s: float) -> None: ...

    def release(self) -> None: ...


class InProcessLockProvider:
    _locks: ClassVar[dict[str, threading.Lock]] = {}
    _guard = threading.Lock()

    def __init__(self, base_path: str) -> None:
        with self._guard:
            self._lock = self._locks.setdefault(base_path, threading.Lock())
        self.base_path = base_path

    def acquire(self, timeout_s: float) -> None:
        if not self._lock.acquire(timeout=timeout_s):
            raise LockAcquisitionError(
                f"could not take the in-process lock of {self.base_path} within {timeout_s:.0f}s; "
                "another write in this process holds it"
            )

    def release(self) -> None:
        self._lock.release()


@contextmanager
def locked(provider: LockProvider, timeout_s: float) -> Iterator[None]:
    provider.acquire(timeout_s)
    try:
        yield
    finally:
        provider.release()
