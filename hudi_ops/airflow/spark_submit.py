"""spark-submit as hudi-ops needs it from Airflow: the job's exit code and final JSON line kept,
and the whole process group ended on kill.

Killing only the spark-submit JVM (the provider's default) leaves the PySpark driver, its child,
running; spark-submit therefore starts in its own session, and `on_kill` signals the group.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
from collections.abc import Iterable, Iterator
from typing import Any

from airflow.providers.apache.spark.hooks.spark_submit import SparkSubmitHook

from hudi_ops.job_specs import JobFailure, JobResult, JobSpec, ServiceResult

KILL_GRACE_S = 15


class HudiSparkSubmitHook(SparkSubmitHook):
    returncode: int | None = None
    spec: JobSpec | None = None  # the job it runs, which reads the job's final JSON line
    outcome: JobResult | ServiceResult | JobFailure | None = None  # what that line said

    def submit(self, application: str = "", **kwargs: Any) -> str | None:
        kwargs.setdefault("start_new_session", True)
        try:
            return super().submit(application, **kwargs)
        finally:
            process = self._submit_sp
            if process is not None:
                self.returncode = process.returncode
                if process.stdout is not None:  # the provider reads it to the end but never closes it
                    process.stdout.close()

    def _process_spark_submit_log(self, itr: Iterable[str]) -> None:
        super()._process_spark_submit_log(self._remember_result(itr))

    def _remember_result(self, lines: Iterable[str]) -> Iterator[str]:
        for line in lines:
            if self.spec is not None and (outcome := self.spec.parse_result(line)) is not None:
                self.outcome = outcome
            yield line

    def on_kill(self) -> None:
        process = self._submit_sp
        if process is not None and process.poll() is None:
            self.log.info("Ending spark-submit's process group %s", process.pid)
            with contextlib.suppress(ProcessLookupError, subprocess.TimeoutExpired):
                os.killpg(process.pid, signal.SIGTERM)
                process.wait(timeout=KILL_GRACE_S)
            with contextlib.suppress(ProcessLookupError):  # whatever ignored SIGTERM, e.g. a busy driver
                os.killpg(process.pid, signal.SIGKILL)
        super().on_kill()
