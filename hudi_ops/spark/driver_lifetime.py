"""Under spark-submit the PySpark driver is a child of spark-submit's JVM. Whoever ends that JVM (the
Spark provider's `on_kill` signals only it, an OOM killer, a user) ends the Spark session, so the
driver must not live on: busy in Python, it would keep its place in the table lock's queue or go on
reading sources for a job that can no longer commit."""

from __future__ import annotations

import os
import signal
import threading
import time

from hudi_ops.errors import EXIT_FAILED

POLL_S = 0.5
#: for the main thread to unwind once interrupted (a ZooKeeper client closes its session, so its lock
#: node goes at once rather than at the session's timeout)
GRACE_S = 5.0


def end_with_spark_submit() -> None:
    """End this process soon after spark-submit's JVM is gone (it is handed to another parent)."""
    if "PYSPARK_GATEWAY_PORT" not in os.environ:  # not started by spark-submit
        return
    # a JVM that died before this line leaves the reaper as the parent watched: harmless, as the
    # session's first call into the dead JVM fails the job
    parent = os.getppid()

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(POLL_S)
        os.kill(os.getpid(), signal.SIGINT)  # a real signal: it wakes a main thread that waits
        time.sleep(GRACE_S)
        os._exit(EXIT_FAILED)  # the main thread is stuck in a call that no interrupt reaches

    threading.Thread(target=watch, name="end-with-spark-submit", daemon=True).start()
