"""The spark-submit application: `spark-submit --jars <hudi bundle> hudi_ops/spark/__main__.py JOB ...`.

Jobs: `ingest`, `backfill` (writes through Hudi's datasource) and the table services `compact`,
`cluster`, `clean`, `archive`, `rollback-failed`, `savepoint`, `restore` (Hudi's write client).

Also `python -m hudi_ops.spark ...`, with a local SparkSession. Flags follow Hudi utilities'
(HoodieStreamer) names. Prints one final JSON line and exits 0 ok, 2 bad input or usage, 3 write
conflict (retryable), 4 lock timeout (retryable), 1 anything else. Input that can be checked without
data (flags, settings against the table's, the window) is checked before Spark starts, and a run
with nothing to do never starts Spark.
"""

from __future__ import annotations

import argparse
import json
import sys
import traceback
from collections.abc import Sequence
from typing import Any, NoReturn

from hudi_ops.config import command_line_options
from hudi_ops.errors import EXIT_FAILED, EXIT_OK, HudiOpsError, InvalidInputError, exit_code
from hudi_ops.sources import SOURCE_FORMATS
from hudi_ops.spark.jobs.hudi_write import OPERATIONS
from hudi_ops.spark.jobs.plan_execution import DEFAULT_PLAN_WAIT_S, MODES
from hudi_ops.spark.jobs.target import TABLE_TYPES


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # a usage error is bad input, reported like any other
        raise InvalidInputError(f"{self.prog}: {message}; see --help")


def _parser() -> argparse.ArgumentParser:
    p = _Parser(prog="hudi_ops.spark", description="hudi-ops Spark jobs on Apache Hudi")
    sub = p.add_subparsers(dest="job", required=True)
    for name in ("ingest", "backfill"):
        j = sub.add_parser(name)
        j.add_argument("--target-base-path", required=True)
        j.add_argument("--target-table")
        j.add_argument("--table-type", type=str.upper, choices=TABLE_TYPES,
                       help="default: the table's type, COPY_ON_WRITE for a new table")
        j.add_argument("--source-path", required=True)
        j.add_argument("--source-format", default="parquet", choices=SOURCE_FORMATS)
        j.add_argument("--record-key-field", help="field, or comma-separated fields (default: the table's)")
        j.add_argument("--partition-path-field", help="field(s) (default: the table's; none for a new table)")
        j.add_argument("--source-ordering-field", help="the field whose greatest value wins (default: the table's)")
        j.add_argument("--op", type=str.upper, default="UPSERT", choices=OPERATIONS)
        j.add_argument("--props", help="a properties file of hoodie.* options")
        j.add_argument("--hoodie-conf", action="append", default=[], metavar="K=V")
        if name == "backfill":
            j.add_argument("--start", required=True, help="first dt=YYYY-MM-DD source partition")
            j.add_argument("--end", required=True, help="last dt=YYYY-MM-DD source partition")
            j.add_argument("--run-id", help="the run (Airflow's run_id): its retries resume after its last day, "
                                            "another run of the window writes it again")
    for name in ("compact", "cluster", "clean"):
        j = sub.add_parser(name)
        j.add_argument("--base-path", required=True)
        j.add_argument("--mode", default="scheduleAndExecute", choices=MODES)
        j.add_argument("--props", help="a properties file of hoodie.* options")
        j.add_argument("--hoodie-conf", action="append", default=[], metavar="K=V")
        if name == "clean":
            j.add_argument("--dry-run", action="store_true", help="report what a clean would remove; remove nothing")
        else:
            j.add_argument("--instant-time", help="schedule: the plan's instant; execute: the plan to run "
                                                  "(default: the oldest pending)")
            j.add_argument("--wait-seconds", type=_seconds, default=DEFAULT_PLAN_WAIT_S,
                           help="how long to wait while another run executes the same plan")
    for name in ("archive", "rollback-failed", "savepoint", "restore"):
        j = sub.add_parser(name)
        j.add_argument("--base-path", required=True)
        j.add_argument("--props", help="a properties file of hoodie.* options")
        j.add_argument("--hoodie-conf", action="append", default=[], metavar="K=V")
        if name == "savepoint":
            which = j.add_mutually_exclusive_group()
            which.add_argument("--instant-time", help="the completed commit to savepoint (default: the latest)")
            which.add_argument("--delete", metavar="T", help="delete the savepoint at T instead")
            j.add_argument("--comment")
        if name == "restore":
            j.add_argument("--savepoint", required=True, metavar="T", help="the savepoint to restore the table to")
    return p


def _seconds(text: str) -> float:
    value = float(text)
    if value < 0:
        raise ValueError(text)
    return value


def main(argv: Sequence[str] | None = None, *, spark: Any | None = None) -> int:
    job = "?"
    try:
        args = _parser().parse_args(argv)
        job = args.job
        options = command_line_options(args.props, args.hoodie_conf)
        with _Session(spark, job) as session:
            result = _run(args, options, session)
        print(json.dumps({"status": "ok", **result.to_dict()}), flush=True)
        return EXIT_OK
    except Exception as e:  # every failure ends with the JSON line: the operator reads it
        error = e if isinstance(e, HudiOpsError) else HudiOpsError(f"the job failed: {type(e).__name__}: {e}")
        code = exit_code(error)
        print(json.dumps({"status": "failed", "job": job, "exit_code": code, "error": type(error).__name__,
                          "message": str(error)}), flush=True)
        if code == EXIT_FAILED:  # the unforeseen: keep the trace (Java's too) for the log
            traceback.print_exception(e.__cause__ or e, file=sys.stderr)
        print(f"hudi_ops.spark: error: {error}", file=sys.stderr, flush=True)
        return code


def _run(args: argparse.Namespace, options: dict[str, str], session: _Session) -> Any:
    from hudi_ops.spark.jobs import (
        archive,
        backfill,
        clean,
        ingest,
        plan_execution,
        restore,
        rollback_failed,
        savepoint,
    )
    from hudi_ops.spark.jobs.cluster import CLUSTERING
    from hudi_ops.spark.jobs.compact import COMPACTION

    if args.job in ("ingest", "backfill"):
        args.table_flags = {"table_name": args.target_table, "table_type": args.table_type,
                            "record_key": args.record_key_field, "partition_path": args.partition_path_field,
                            "ordering_field": args.source_ordering_field}
        if args.job == "backfill":
            backfill.window(args.start, args.end)
        return (ingest if args.job == "ingest" else backfill).run(args, options, session)
    if args.job in ("compact", "cluster"):
        return plan_execution.run(COMPACTION if args.job == "compact" else CLUSTERING, args, options, session)
    services = {"clean": clean, "archive": archive, "rollback-failed": rollback_failed, "savepoint": savepoint,
                "restore": restore}
    return services[args.job].run(args, options, session)


class _Session:
    """Calling it starts the job's session the first time it is needed; one the job started ends with it."""

    def __init__(self, given: Any | None, job: str) -> None:
        self.given, self.job, self.started = given, job, None

    def __call__(self) -> Any:
        if self.given is not None:
            return self.given
        if self.started is None:
            from hudi_ops.spark.session import spark_session

            self.started = spark_session(f"hudi-ops {self.job}")
        return self.started

    def __enter__(self) -> _Session:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.started is not None:
            self.started.stop()


if __name__ == "__main__":
    sys.exit(main())
