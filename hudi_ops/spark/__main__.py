"""The spark-submit application: `spark-submit --jars <hudi bundle> hudi_ops/spark/__main__.py JOB ...`.

Jobs: `ingest`, `backfill` (writes through Hudi's datasource), the table services `compact`, `cluster`,
`clean`, `archive`, `rollback-failed`, `savepoint`, `restore` (Hudi's write client), and the repair `dedupe`
(keys held more than once within a partition, rewritten through Hudi's datasource).

Also `python -m hudi_ops.spark ...`, with a local SparkSession. Flags follow Hudi utilities'
(HoodieStreamer) names. Prints one final JSON line (also into $HUDI_OPS_RESULT_FILE when set) and
exits 0 ok, 2 bad input or usage, 3 write
conflict (retryable), 4 lock timeout (retryable), 5 a source that did not answer (retryable), 1 anything
else. Input that can be checked without
data (flags, settings against the table's, the window) is checked before Spark starts, and a run
with nothing to do never starts Spark.
"""

from __future__ import annotations

import dataclasses
import os
import sys
import time
import traceback
from collections.abc import Sequence
from typing import Any

from hudi_ops.errors import (
    EXIT_FAILED,
    EXIT_OK,
    CatalogSyncError,
    HudiOpsError,
    JobEndedError,
    LockAcquisitionError,
    exit_code,
)
from hudi_ops.job_specs import JOBS, JobSpec, parse_argv
from hudi_ops.job_specs.results import JobFailure, JobResult, ServiceResult, report
from hudi_ops.locks.held_lock import lock_waits, reset_lock_waits
from hudi_ops.options.job_defaults import resolve_job_options
from hudi_ops.spark.driver_lifetime import ENDING, DriverEnded, end_with_spark_submit_and_task, report_outcome
from hudi_ops.spark.jobs import meta_sync

#: when this driver's Python came up (under spark-submit, after the JVM that started it)
_PYTHON_STARTED = time.time()


def main(argv: Sequence[str] | None = None, *, spark: Any | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] in (["-h"], ["--help"]):
        print(f"usage: hudi_ops.spark JOB [flags]; JOB is one of {', '.join(JOBS)}; JOB --help lists its flags")
        return EXIT_OK
    job = argv[0] if argv else "?"
    try:
        spec = parse_argv(argv)
        reset_lock_waits()
        with _Session(spark, job) as session:
            options = resolve_job_options(spec.JOB, spec.options())
            meta_sync.check_options(spec.JOB, options)
            result = _synced(spec, _run(spec, options, session), options, session)
        started = {"session_start": session.start_ms} if session.start_ms else {}
        done = dataclasses.replace(result, durations_ms={**result.durations_ms, **lock_waits(), **started})
        report_outcome(lambda: report(done))  # from here the job keeps the outcome it reported, whatever ends it
        return EXIT_OK
    except (Exception, DriverEnded) as e:  # every failure ends with the JSON line: the operator reads it
        error = _as_error(e)
        code = exit_code(error)
        report_outcome(lambda: _report_failure(job, error))
        if code == EXIT_FAILED and not isinstance(error, JobEndedError):  # the unforeseen: keep the trace
            # (Java's too) for the log
            traceback.print_exception(e.__cause__ or e, file=sys.stderr)
        print(f"hudi_ops.spark: error: {error}", file=sys.stderr, flush=True)
        return code


def _report_failure(job: str, error: HudiOpsError) -> None:
    report(JobFailure(job, exit_code(error), type(error).__name__, str(error)))


def _as_error(e: BaseException) -> HudiOpsError:
    if isinstance(e, HudiOpsError):
        return e
    if isinstance(e, DriverEnded):
        return JobEndedError(f"{e}: the job stopped where it was; a write it had not committed stays invisible "
                             "(Hudi rolls it back once its heartbeat expires) and the task's retry runs the batch")
    return HudiOpsError(f"the job failed: {type(e).__name__}: {e}")


def _run(spec: JobSpec, options: dict[str, str], session: _Session) -> JobResult | ServiceResult:
    from hudi_ops.spark.jobs import (
        archive,
        backfill,
        clean,
        dedupe,
        ingest,
        plan_execution,
        restore,
        rollback_failed,
        savepoint,
    )
    from hudi_ops.spark.jobs.cluster import CLUSTER
    from hudi_ops.spark.jobs.compact import COMPACT

    plan_services = {s.table_service.job: s for s in (COMPACT, CLUSTER)}
    if spec.JOB in plan_services:
        return plan_execution.run(plan_services[spec.JOB], spec, options, session)
    jobs = {"ingest": ingest, "backfill": backfill, "clean": clean, "archive": archive,
            "rollback-failed": rollback_failed, "savepoint": savepoint, "restore": restore, "dedupe": dedupe}
    return jobs[spec.JOB].run(spec, options, session)


def _synced(spec: JobSpec, result: JobResult | ServiceResult, options: dict[str, str],
            session: _Session) -> JobResult | ServiceResult:
    """`result`, once the table is synced to its catalog when the run changed what a catalog holds."""
    if not meta_sync.due(spec.JOB, result, options):
        return result
    try:
        table, seconds = meta_sync.sync_catalog(session(), spec.base_path, options,  # type: ignore[attr-defined]
                                                after=f"{spec.JOB} {result.outcome} {result.instant}")
    except (CatalogSyncError, LockAcquisitionError) as e:  # the commit stands: the run reports it done
        print(f"hudi_ops.spark: warning: {e}", file=sys.stderr, flush=True)
        return dataclasses.replace(result, warnings=(*result.warnings, f"catalog sync failed: {e}"))
    return dataclasses.replace(result, catalog=table,
                               durations_ms={**result.durations_ms, "catalog_sync": round(seconds * 1000, 1)})


class _Session:
    """Calling it starts the job's session the first time it is needed; one the job started ends with it."""

    def __init__(self, given: Any | None, job: str) -> None:
        self.given, self.job, self.started = given, job, None
        self.ready = 0.0
        self.start_ms = 0.0  # how long starting it took, within the job's work

    def __call__(self) -> Any:
        if self.given is not None:
            return self.given
        if self.started is None:
            from hudi_ops.spark.session import spark_session

            began = time.perf_counter()
            self.started = spark_session(f"hudi-ops {self.job}")
            self.ready = time.time()
            self.start_ms = round((time.perf_counter() - began) * 1000, 1)
        return self.started

    def __enter__(self) -> _Session:
        return self

    def __exit__(self, kind: type[BaseException] | None, *exc: object) -> None:
        if self.started is None:
            return
        if "PYSPARK_GATEWAY_PORT" not in os.environ:  # this Python started the JVM: stop what it started
            self.started.stop()
            return
        # spark-submit's JVM started this Python and stops the session as the Python ends (Spark's shutdown
        # hook). PySpark's own stop() would wait up to half a second more for its accumulator server's
        # poll loop (a daemon thread, which an ending Python does not wait for)
        if kind is None:  # after a failure, the JVM may be gone or its connection half-read
            self._say_where_the_time_went()

    def _say_where_the_time_went(self) -> None:
        """For the job's log and bench/job_fixed_cost.py; never in the way of the job's own outcome."""
        try:
            runtime = self.started.sparkContext._jvm.java.lang.management.ManagementFactory.getRuntimeMXBean()
            jvm_started, done = runtime.getStartTime() / 1000, time.time()
        except Exception:  # a JVM gone with the job's failure: that failure is what the log must say
            return
        print(f"hudi_ops.spark: {self.job} took {_PYTHON_STARTED - jvm_started:.2f} s for the JVM and Python "
              f"to start, {self.ready - _PYTHON_STARTED:.2f} s for the Spark session, "
              f"{done - self.ready:.2f} s for the job (Hudi's client and the work)", file=sys.stderr, flush=True)


if __name__ == "__main__":
    # a main thread still in a call past the grace (one no signal reaches) ends without unwinding: this says why
    end_with_spark_submit_and_task(lambda: _report_failure(sys.argv[1] if len(sys.argv) > 1 else "?",
                                                           _as_error(DriverEnded(ENDING))))
    sys.exit(main())
