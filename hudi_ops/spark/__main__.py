"""The spark-submit application: `spark-submit hudi_ops/spark/__main__.py ingest|backfill --flags`.

Also `python -m hudi_ops.spark ...` with a local SparkSession. Flags follow Hudi utilities'
(HoodieStreamer) names. Prints one final JSON line and exits 0 ok, 2 bad input or usage,
3 write conflict (retryable), 4 lock timeout (retryable), 1 anything else.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence

from hudi_ops.errors import EXIT_BAD_INPUT, EXIT_OK, HudiOpsError, exit_code


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="hudi_ops.spark", description="hudi-ops Spark jobs")
    sub = p.add_subparsers(dest="job", required=True)
    for name in ("ingest", "backfill"):
        j = sub.add_parser(name)
        j.add_argument("--target-base-path", required=True)
        j.add_argument("--target-table")
        j.add_argument("--table-type", default="COPY_ON_WRITE", choices=["COPY_ON_WRITE", "MERGE_ON_READ"])
        j.add_argument("--source-path", required=True)
        j.add_argument("--source-format", default="parquet", choices=["parquet", "json", "csv"])
        j.add_argument("--record-key-field")
        j.add_argument("--partition-path-field")
        j.add_argument("--source-ordering-field")
        j.add_argument("--op", default="UPSERT", choices=["UPSERT", "INSERT", "BULK_INSERT", "DELETE"])
        j.add_argument("--props")
        j.add_argument("--hoodie-conf", action="append", default=[], metavar="K=V")
        if name == "backfill":
            j.add_argument("--start", required=True, help="first dt=YYYY-MM-DD source partition")
            j.add_argument("--end", required=True, help="last dt=YYYY-MM-DD source partition")
    return p


def main(argv: Sequence[str] | None = None, *, spark: object | None = None) -> int:
    try:
        args = _parser().parse_args(argv)
    except SystemExit as e:  # argparse already printed the usage error
        return EXIT_BAD_INPUT if e.code else EXIT_OK
    try:
        from hudi_ops.spark.jobs import backfill, ingest
        from hudi_ops.spark.session import spark_session

        session = spark or spark_session(f"hudi-ops {args.job}")
        result = (ingest if args.job == "ingest" else backfill).run(session, args)
        print(json.dumps({"status": "ok", **result.to_dict()}), flush=True)
        return EXIT_OK
    except HudiOpsError as e:
        code = exit_code(e)
        print(json.dumps({"status": "failed", "job": args.job, "exit_code": code, "error": type(e).__name__,
                          "message": str(e)}), flush=True)
        print(f"hudi_ops.spark: error: {e}", file=sys.stderr)
        return code


if __name__ == "__main__":
    sys.exit(main())
