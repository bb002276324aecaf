"""Jobs as real spark-submit processes, as Airflow runs them: started, awaited, killed."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hudi_ops.job_specs.results import RESULT_FILE_ENV
from hudi_ops.s3_settings import S3Settings
from hudi_ops.spark.launch import APPLICATION, spark_submit_command
from tests.conftest import SPARK_TEST_CONF

SPARK_SUBMIT = str(Path(sys.executable).parent / "spark-submit")
#: one core and a small heap per job, so that two or three jobs share the machine's two cores
JOB_CONF = {**SPARK_TEST_CONF, "spark.driver.memory": "640m"}


@dataclass
class Job:
    """A spark-submit job; its final JSON line is read from its result file, as the operators read it (its
    log interleaves the driver's stdout with the JVM's stderr, which may share a line)."""

    process: subprocess.Popen[str]
    log: Path

    @classmethod
    def start(cls, job_args: Sequence[str], log: Path, *, master: str = "local[1]", jars: Sequence[str] = (),
              conf: Mapping[str, str] | None = None, env: Mapping[str, str] | None = None,
              s3: S3Settings | None = None, application: str = APPLICATION) -> Job:
        """`jars`, `conf` and `env`: beyond Hudi's jars, the tests' Spark settings and this environment; `s3`:
        the S3 its table is on; `application`: another PySpark application than hudi-ops' jobs."""
        result_file = _result_file(log)
        result_file.unlink(missing_ok=True)
        env = {**os.environ, **(env or {}), "PYSPARK_PYTHON": sys.executable, "PYSPARK_DRIVER_PYTHON": sys.executable,
               RESULT_FILE_ENV: str(result_file)}
        command = spark_submit_command(job_args, master=master, conf={**JOB_CONF, **(conf or {})},
                                       spark_submit=SPARK_SUBMIT, jars=jars, s3=s3, application=application)
        out = log.open("w")
        # its own process group, so the harness's kill reaches the JVM and the Python driver at once
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, text=True, env=env,
                                   start_new_session=True)
        out.close()
        return cls(process, log)

    def finish(self, timeout_s: float = 300) -> tuple[int, dict[str, Any]]:
        code = self.process.wait(timeout=timeout_s)
        result = self.result()
        assert result is not None, f"the job exited {code}, no result; its log ends:\n{self.log.read_text()[-3000:]}"
        return code, result

    def result(self) -> dict[str, Any] | None:
        """The job's final JSON line, once it has written it; None before, or when it never did."""
        try:
            return json.loads(_result_file(self.log).read_text())
        except FileNotFoundError:
            return None

    def kill(self) -> None:
        os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=30)


def _result_file(log: Path) -> Path:
    return log.with_name(log.name + ".result.json")


def run_job(job_args: Sequence[str], log: Path, **kw: Any) -> tuple[int, dict[str, Any]]:
    return Job.start(job_args, log, **kw).finish()


def await_write_in_flight(table: Path | str, before: set[str], job: Job, timeout_s: float = 180) -> str:
    """The instant `job` has in flight on `table`, once it has one (`before`: the instants already there)."""
    from hudi_ops.format.meta_client import MetaClient

    deadline = time.monotonic() + timeout_s
    meta = MetaClient.open(table)
    while not (new := [i.requested_time for i in meta.reload().timeline().pending if i.requested_time not in before]):
        assert job.process.poll() is None and time.monotonic() < deadline, job.log.read_text()[-3000:]
        time.sleep(0.02)
    return new[0]


@contextlib.contextmanager
def waiting_to_commit(table: Path | str, before: set[str], job: Job, options: Mapping[str, str]) -> Iterator[Any]:
    """The table's lock, held from when `job` has a write in flight until it has written its files and
    waits for the lock to commit (the block runs then); released at the block's end."""
    from hudi_ops.locks.held_lock import HeldLock

    lock = HeldLock({**options, "hoodie.write.lock.wait_time_ms": "60000"},
                    options["hoodie.write.lock.zookeeper.lock_key"])
    await_write_in_flight(table, before, job)
    with lock as held:
        held.wait_for_waiters(1, timeout_s=180)
        yield held
