"""Hudi's FileSystemBasedLockProvider: a `lock` file created atomically, for writers on one host.

The file lives in `hoodie.write.lock.filesystem.path` (default `<table>/.hoodie`) and names its
owner. With `hoodie.write.lock.filesystem.expire` minutes > 0, a lock file older than that is taken
as left by a dead writer and removed. Object stores lack atomic create-if-absent, so only local
(and mounted) file systems are accepted.
"""

from __future__ import annotations

import os
import socket
import threading
import time
import uuid

from hudi_ops.config import int_key, str_key
from hudi_ops.errors import ConfigError, FileAlreadyExistsError, LockAcquisitionError
from hudi_ops.storage import Storage

FILESYSTEM_LOCK_PATH = str_key("hoodie.write.lock.filesystem.path")
FILESYSTEM_LOCK_EXPIRE = int_key("hoodie.write.lock.filesystem.expire", 0, minimum=0)
LOCK_FILE_NAME = "lock"


class FileSystemBasedLockProvider:
    def __init__(self, storage: Storage, *, expire_minutes: int = 0) -> None:
        if not storage.is_local:
            raise ConfigError(
                f"the file-system lock needs atomic create-if-absent, which {storage.uri} lacks; "
                "use org.apache.hudi.client.transaction.lock.ZookeeperBasedLockProvider"
            )
        self.storage = storage  # the lock folder
        self.expire_ms = expire_minutes * 60_000
        self.lock_path = storage.uri_of(LOCK_FILE_NAME)
        self._token: str | None = None

    def _owner(self) -> str:
        return f"{uuid.uuid4()} host={socket.gethostname()} pid={os.getpid()} thread={threading.current_thread().name}"

    def acquire(self, timeout_s: float) -> None:
        deadline = time.monotonic() + timeout_s
        pause = 0.01
        token = self._owner()
        while True:
            self._drop_if_expired()
            try:
                self.storage.create_new(LOCK_FILE_NAME, token.encode())
                self._token = token
                return
            except FileAlreadyExistsError:
                pass
            if time.monotonic() >= deadline:
                raise LockAcquisitionError(
                    f"could not take the lock {self.lock_path} within {timeout_s:g}s; it is held by "
                    f"{self._holder()!r} (remove the file only if that writer is gone)"
                )
            time.sleep(min(pause, max(0.0, deadline - time.monotonic())))
            pause = min(pause * 2, 0.5)

    def _holder(self) -> str:
        try:
            return self.storage.read_bytes(LOCK_FILE_NAME).decode(errors="replace")
        except FileNotFoundError:
            return ""

    def _drop_if_expired(self) -> None:
        if not self.expire_ms:
            return
        try:
            age = time.time() * 1000 - self.storage.info(LOCK_FILE_NAME).mtime_ms
        except FileNotFoundError:
            return
        if age > self.expire_ms:
            self.storage.delete_file(LOCK_FILE_NAME)

    def assert_held(self) -> None:
        if self._token is None or self._holder() != self._token:
            raise LockAcquisitionError(f"the lock {self.lock_path} is no longer held by this writer (it expired?)")

    def release(self) -> None:
        # only our own lock file: after an expiry another writer may own it
        if self._token is not None and self._holder() == self._token:
            self.storage.delete_file(LOCK_FILE_NAME)
        self._token = None

    def close(self) -> None:
        self.release()
