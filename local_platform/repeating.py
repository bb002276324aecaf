"""A task `make up` repeats in a thread of its own while the platform is up (its sample sources)."""

from __future__ import annotations

import sys
import threading


class Repeating:
    """`start()` runs `once()` now and every `every_s` seconds until `stop()`. A failure (a full disk, a
    broker restarting) is said on stderr and handed to `failed()`; the next time comes all the same."""

    def __init__(self, every_s: float, name: str) -> None:
        self.every_s = every_s
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)

    def once(self) -> object:
        raise NotImplementedError

    def failed(self, error: Exception) -> None:
        """What a subclass does after a failed `once()` (the message is already out)."""

    def start(self) -> Repeating:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()

    def _run(self) -> None:
        while True:
            try:
                self.once()
            except Exception as e:
                print(f"{self._thread.name}: {type(e).__name__}: {e}", file=sys.stderr, flush=True)
                self.failed(e)
            if self._stop.wait(self.every_s):
                return
