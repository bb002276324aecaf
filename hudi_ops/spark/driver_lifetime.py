"""The PySpark driver ends with whoever runs it. Under spark-submit it is a child of spark-submit's JVM:
whoever ends that JVM (the Spark provider's `on_kill` signals only it, an OOM killer, a user) ends the
Spark session, so the driver must not live on: busy in Python, it would keep its place in the table
lock's queue or go on reading sources for a job that can no longer commit.

The Airflow task process is named in $HUDI_OPS_TASK_PROCESS (its host, pid and start time), and a
driver on that host (client mode) ends with it too: a task process that died hard (a lost worker, the
OOM killer, `kill -9`) leaves spark-submit running, and Airflow's retry would start a second attempt
beside it. Ending the driver ends spark-submit's JVM, which waits for it. A driver on another host
(cluster mode) cannot see the task process and leaves that to the job's fence.

The watcher ends the job with a signal of its own (SIGUSR1), whose handler raises DriverEnded in the main
thread. Not SIGINT: PySpark's handler for it calls into the JVM, and when the main thread is itself in
a Py4J call that second call fails ("reentrant call inside <_io.BufferedReader>") and the job would end
with a Py4J traceback instead of saying why it ended."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import sys
import threading
from collections.abc import Callable
from pathlib import Path

from hudi_ops.errors import EXIT_FAILED

POLL_S = 0.5
#: for the main thread to unwind once interrupted (a ZooKeeper client closes its session, so its lock
#: node goes at once rather than at the session's timeout)
GRACE_S = 5.0
#: `<host>:<pid>:<start time>` of the Airflow task process that started spark-submit (task_process())
TASK_PROCESS_ENV = "HUDI_OPS_TASK_PROCESS"
#: what the driver logs as it ends that way
ENDING = "spark-submit or the Airflow task that started it is gone: ending the job"
_END_SIGNAL = signal.SIGUSR1
#: set once the job has reported its outcome
_finished = threading.Event()
#: held while an outcome is reported: the job's own, or the watcher's for a job stuck past GRACE_S
_reporting = threading.Lock()


class DriverEnded(BaseException):
    """Raised in the main thread as the driver ends itself. Neither an Exception nor a KeyboardInterrupt:
    no `except Exception` on the way (hudi-ops', PySpark's, Py4J's) may swallow or wrap it, Py4J logs a
    KeyboardInterrupt in a call with its traceback, and `finally` blocks still release the job's locks."""


def task_process(pid: int | None = None) -> str:
    """A process (default: this one) as a driver watches it: its host, pid and start time (a pid is reused)."""
    pid = os.getpid() if pid is None else pid
    return f"{socket.gethostname()}:{pid}:{_start_time(pid) or ''}"


def _start_time(pid: int) -> str | None:
    """The process's start time in clock ticks since boot (Linux); None when there is no such process or it
    has died and waits for its parent to reap it (a zombie)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat.rsplit(")", 1)[1].split()  # after the command's name: field 3 on
    return None if fields[0] in ("Z", "X") else fields[19]  # its state, and field 22


def _is_alive(named: str) -> bool:
    _, pid_text, started = named.split(":")
    pid = int(pid_text)
    if started:
        return _start_time(pid) == started
    try:  # no /proc where it was named: the pid alone
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def end_with_spark_submit_and_task(last_word: Callable[[], None]) -> None:
    """End this process soon after spark-submit's JVM is gone (it is handed to another parent), or the
    Airflow task process named in the environment. `last_word` reports the job ended, for a main thread
    that does not unwind within GRACE_S."""
    gone: list[Callable[[], bool]] = []
    if "PYSPARK_GATEWAY_PORT" in os.environ:  # started by spark-submit
        # a JVM that died before this line leaves the reaper as the parent watched: harmless, as the
        # session's first call into the dead JVM fails the job
        parent = os.getppid()
        gone.append(lambda: os.getppid() != parent)
    task = os.environ.get(TASK_PROCESS_ENV, "").strip()
    if task.count(":") == 2 and task.split(":")[0] == socket.gethostname():
        gone.append(lambda: not _is_alive(task))
    if not gone:  # `python -m hudi_ops.spark` belongs to whoever started it
        return

    def end(signum: int, frame: object) -> None:
        if not _finished.is_set():  # a job that has reported its outcome keeps it
            raise DriverEnded(ENDING)

    signal.signal(_END_SIGNAL, end)

    def watch() -> None:
        while not any(check() for check in gone):
            if _finished.wait(POLL_S):
                return
        with contextlib.suppress(OSError):  # stderr is a pipe into the JVM, which may be gone
            print(f"hudi_ops.spark: {ENDING}", file=sys.stderr, flush=True)
        os.kill(os.getpid(), _END_SIGNAL)  # a real signal: it wakes a main thread that waits
        if _finished.wait(GRACE_S):
            return  # the job reported its own outcome and ends with it
        with _reporting:  # held to the end: an outcome the job gives later would not be the one that holds
            if _finished.is_set():
                return
            # the main thread is stuck in a call that no interrupt reaches: the job ends here, whatever its last
            # word meets (a closed stdout as spark-submit's JVM is gone, a result store that does not answer)
            threading.Timer(GRACE_S, os._exit, (EXIT_FAILED,)).start()
            try:
                with contextlib.suppress(Exception):
                    last_word()
            finally:
                os._exit(EXIT_FAILED)

    threading.Thread(target=watch, name="end-with-spark-submit-and-task", daemon=True).start()


def report_outcome(report: Callable[[], None]) -> None:
    """`report` called, the job's outcome: from then on the job ends on its own (a signal would only turn the
    outcome it reported into a traceback). Never once the watcher has ended the job: it waits for that."""
    with _reporting:
        report()
        _finished.set()

