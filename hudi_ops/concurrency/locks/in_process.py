"""Hudi's InProcessLockProvider: writers of one table inside one process (threads) exclude each other."""

from __future__ import annotations

import threading
from typing import ClassVar

from hudi_ops.errors import LockAcquisitionError


class InProcessLockProvider:
    _locks: ClassVar[dict[str, threading.Lock]] = {}
    _guard = threading.Lock()

    def __init__(self, table_id: str) -> None:
        with self._guard:
            self._lock = self._locks.setdefault(table_id, threading.Lock())
        self.lock_path = f"in-process lock of {table_id}"

    def acquire(self, timeout_s: float) -> None:
        if not self._lock.acquire(timeout=timeout_s):
            raise LockAcquisitionError(
                f"could not take the {self.lock_path} within {timeout_s:g}s; another write in this process holds it"
            )

    def release(self) -> None:
        self._lock.release()

    def assert_held(self) -> None:
        if not self._lock.locked():
            raise LockAcquisitionError(f"the {self.lock_path} is not held")

    def close(self) -> None:
        """Nothing to close: the lock lives as long as the process."""
