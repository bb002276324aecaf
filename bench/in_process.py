"""A hudi-ops job run in this process on a shared SparkSession, for benchmarks that time the jobs
without a JVM start each."""

from __future__ import annotations

import contextlib
import io
import json
from typing import Any


def run_job(spark: Any, argv: list[str]) -> dict[str, Any]:
    """The job's JSON result; a failed job stops the benchmark with its output."""
    from hudi_ops.spark.__main__ import main

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(argv, spark=spark)
    assert code == 0, out.getvalue()[-2000:]
    return json.loads([ln for ln in out.getvalue().splitlines() if ln.startswith("{")][-1])
