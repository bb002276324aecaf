"""`ingest`: write the source files that arrived since the last ingest, in one commit.

The checkpoint is the (modification time, path) of the newest file ingested, kept in the commit's
extra metadata under Hudi's `deltastreamer.checkpoint.key`, so a re-run never ingests a file twice
and a run with nothing new makes no commit.
"""

from __future__ import annotations

import argparse
import time
from typing import Any

from hudi_ops.engine.spark import SparkEngine
from hudi_ops.spark.jobs.base import JobResult, last_checkpoint, read_source, source_files, target_table, write_options
from hudi_ops.storage import FileInfo, Storage

CHECKPOINT_KEY = "deltastreamer.checkpoint.key"


def _position(f: FileInfo) -> str:
    return f"{f.mtime_ms:015d}:{f.path}"


def run(spark: Any, args: argparse.Namespace) -> JobResult:
    started = time.perf_counter()
    options = write_options(args)
    table = target_table(args, options)
    source = Storage.for_uri(args.source_path)
    checkpoint = last_checkpoint(table, CHECKPOINT_KEY)
    new = [f for f in source_files(source, "", args.source_format) if checkpoint is None or _position(f) > checkpoint]
    if not new:
        return JobResult("ingest", None, None, checkpoint=checkpoint)
    data = read_source(spark, source, new, args.source_format)
    read_ms = (time.perf_counter() - started) * 1000
    result = table.write(
        data, args.op, options=options, extra_metadata={CHECKPOINT_KEY: _position(new[-1])},
        engine=SparkEngine(spark),
    )
    return JobResult(
        "ingest", result.instant_time, result.operation, rows=result.records, files=result.files_written,
        bytes=result.bytes_written, checkpoint=_position(new[-1]), commits=1,
        durations_ms={"read": round(read_ms, 1), **result.durations_ms, "lock_held": result.lock_held_ms,
                      "total": round((time.perf_counter() - started) * 1000, 1)},
    )
