"""Under spark-submit the PySpark driver is a child of spark-submit's JVM. Whoever ends that JVM (the
Spark provider's `on_kill` signals only it, an OOM killer, a user) ends the Spark session, so the
driver must not live on: busy in Python, it would keep its place in the table lock's queue or go on
reading sources for a job that can no longer commit."""

from __future__ import annotations

import os
import threading
import time

from hudi_ops.errors import EXIT_FAILED

POLL_S = 0.5


def end_with_spark_submit() -> None:
    """Exit as soon as spark-submit's JVM is gone (this process is handed to another parent)."""
    if "PYSPARK_GATEWAY_PORT" not in os.environ:  # not started by spark-submit
        return
    parent = os.getppid()

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(POLL_S)
        os._exit(EXIT_FAILED)  # no cleanup to run: the session and its JVM are gone

    threading.Thread(target=watch, name="end-with-spark-submit", daemon=True).start()
