"""`backfill`: rewrite the source's `dt=YYYY-MM-DD` partitions from `--start` to `--end`, one commit each.

Its checkpoint (the last day done, under a key naming the range) lets a killed or conflicting run
resume where it stopped, beside a steady ingestion on the same table.
"""

from __future__ import annotations

import argparse
import datetime as dt
import time
from typing import Any

from hudi_ops.engine.spark import SparkEngine
from hudi_ops.errors import InvalidInputError
from hudi_ops.spark.jobs.base import JobResult, last_checkpoint, read_source, source_files, target_table, write_options
from hudi_ops.storage import Storage

#: extra-metadata key of a window's checkpoint, the last day it committed: `<prefix><start>_<end>`
CHECKPOINT_PREFIX = "hudi-ops.backfill.checkpoint."


def _day(text: str, flag: str) -> dt.date:
    try:
        return dt.date.fromisoformat(text)
    except ValueError:
        raise InvalidInputError(f"{flag} {text!r} is not a date; write YYYY-MM-DD") from None


def run(spark: Any, args: argparse.Namespace) -> JobResult:
    started = time.perf_counter()
    first, last = _day(args.start, "--start"), _day(args.end, "--end")
    if first > last:
        raise InvalidInputError(f"--start {first} is after --end {last}")
    options = write_options(args)
    table = target_table(args, options)
    source = Storage.for_uri(args.source_path)
    key = f"{CHECKPOINT_PREFIX}{first}_{last}"
    done = last_checkpoint(table, key)
    engine = SparkEngine(spark)
    rows = files = size = commits = 0
    instant = operation = None
    day = first
    while day <= last:
        folder = f"dt={day.isoformat()}"
        batch = source_files(source, folder, args.source_format) if (done is None or day.isoformat() > done) else []
        if batch:
            data = read_source(spark, source, batch, args.source_format)
            result = table.write(data, args.op, options=options, extra_metadata={key: day.isoformat()}, engine=engine)
            rows, files, size, commits = rows + result.records, files + result.files_written, \
                size + result.bytes_written, commits + 1
            instant, operation, done = result.instant_time, result.operation, day.isoformat()
        day += dt.timedelta(days=1)
    return JobResult(
        "backfill", instant, operation, rows=rows, files=files, bytes=size, checkpoint=done, commits=commits,
        durations_ms={"total": round((time.perf_counter() - started) * 1000, 1)},
    )
