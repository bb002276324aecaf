"""Writer heartbeats: `.hoodie/.heartbeat/<instant>`, an empty file whose mtime a live writer refreshes.

A pending instant whose heartbeat is older than `hoodie.client.heartbeat.tolerable.misses` x
`hoodie.client.heartbeat.interval_in_ms` (or missing) belongs to a writer presumed dead.
"""

from __future__ import annotations

import posixpath
import threading
import time

from hudi_ops.config import int_key
from hudi_ops.format.timeline import META_FOLDER
from hudi_ops.storage import Storage

HEARTBEAT_FOLDER = posixpath.join(META_FOLDER, ".heartbeat")
HEARTBEAT_INTERVAL_MS = int_key("hoodie.client.heartbeat.interval_in_ms", 60_000, minimum=1)
HEARTBEAT_TOLERABLE_MISSES = int_key("hoodie.client.heartbeat.tolerable.misses", 2, minimum=1)


def heartbeat_path(instant_time: str) -> str:
    return posixpath.join(HEARTBEAT_FOLDER, instant_time)


def is_expired(storage: Storage, instant_time: str, *, interval_ms: int, tolerable_misses: int) -> bool:
    try:
        last = storage.info(heartbeat_path(instant_time)).mtime_ms
    except FileNotFoundError:
        return True
    return time.time() * 1000 - last > interval_ms * tolerable_misses


class Heartbeat:
    """Refreshes one instant's heartbeat file from a daemon thread until stopped."""

    def __init__(self, storage: Storage, instant_time: str, *, interval_ms: int) -> None:
        self.storage = storage
        self.instant_time = instant_time
        self.interval_s = interval_ms / 1000
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def beat(self) -> None:
        self.storage.write_bytes(heartbeat_path(self.instant_time), b"")

    def start(self) -> Heartbeat:
        self.beat()
        self._thread = threading.Thread(target=self._run, name=f"heartbeat-{self.instant_time}", daemon=True)
        self._thread.start()
        return self

    def _run(self) -> None:
        while not self._stop.wait(self.interval_s):
            self.beat()

    def stop(self, *, delete: bool = True) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        if delete:
            self.storage.delete_file(heartbeat_path(self.instant_time))
