"""The spark-submit application: `spark-submit --jars <hudi bundle> hudi_ops/spark/__main__.py ingest|backfill ...`.

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
    return p


def main(argv: Sequence[str] | None = None, *, spark: Any | None = None) -> int:
    job = "?"
    try:
        args = _parser().parse_args(argv)
        job = args.job
        options = command_line_options(args.props, args.hoodie_conf)
        args.table_flags = {"table_name": args.target_table, "table_type": args.table_type,
                            "record_key": args.record_key_field, "partition_path": args.partition_path_field,
                            "ordering_field": args.source_ordering_field}
        from hudi_ops.spark.jobs import backfill, ingest

        if job == "backfill":
            backfill.window(args.start, args.end)
        with _Session(spark, job) as session:
            result = (ingest if job == "ingest" else backfill).run(args, options, session)
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
