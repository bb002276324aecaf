"""A server of hudi-ops' local platform (ZooKeeper, Kafka, a Hive Metastore, Prometheus) as one process:
started with its log in a file, stopped (SIGTERM, or SIGKILL as a crash would) and started again on the
same ports and data."""

from __future__ import annotations

import atexit
import shutil
import signal
import subprocess
import time
from collections.abc import Callable, Sequence
from pathlib import Path


class ServerProcess:
    """Subclasses set `root` and `log_path`, and start the process with `_launch`."""

    root: Path
    log_path: Path

    def __init__(self) -> None:
        self._process: subprocess.Popen[bytes] | None = None
        atexit.register(self.stop)  # no stray JVM when a run dies before its teardown

    @property
    def running(self) -> bool:
        return self._process is not None and self._process.poll() is None

    def _launch(self, command: Sequence[str], cwd: Path | None = None) -> None:
        with open(self.log_path, "ab") as log:
            self._process = subprocess.Popen(list(command), cwd=cwd, stdin=subprocess.DEVNULL, stdout=log,
                                             stderr=subprocess.STDOUT, start_new_session=True)

    def _until_ready(self, what: str, ready: Callable[[], bool], timeout_s: float) -> None:
        """Until `ready()` holds; a server that exits meanwhile, or is not ready within `timeout_s` (then
        killed), raises with its log's tail."""
        deadline = time.monotonic() + timeout_s
        while not ready():
            if not self.running:
                raise RuntimeError(f"{what} exited during start-up:\n{self.log_tail()}")
            if time.monotonic() > deadline:
                self.stop(hard=True)
                raise RuntimeError(f"{what} was not ready within {timeout_s:g}s:\n{self.log_tail()}")
            time.sleep(0.2)

    def stop(self, *, hard: bool = False, grace_s: float = 20.0) -> None:
        """End the server: SIGTERM, or SIGKILL when `hard` (or when it outlives `grace_s`)."""
        process, self._process = self._process, None
        if process is None or process.poll() is not None:
            return
        process.send_signal(signal.SIGKILL if hard else signal.SIGTERM)
        try:
            process.wait(grace_s)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()

    def log_tail(self, chars: int = 4000) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-chars:]
        except FileNotFoundError:
            return ""

    def cleanup(self) -> None:
        self.stop()
        shutil.rmtree(self.root, ignore_errors=True)
