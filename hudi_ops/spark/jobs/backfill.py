"""`backfill`: rewrite the source's `dt=YYYY-MM-DD` partitions from `--start` to `--end`, one commit a day.

The window's checkpoint (the last day committed, under a key naming the window) lets a killed or
conflicting run resume where it stopped, beside a steady ingestion on the same table.
"""

from __future__ import annotations

import argparse
import datetime as dt
import time
from collections.abc import Callable
from typing import Any

from hudi_ops.errors import InvalidInputError, TableNotFoundError
from hudi_ops.format.meta_client import MetaClient
from hudi_ops.read.pipeline_metadata import backfill_checkpoint_key, latest_value
from hudi_ops.sources import source_files
from hudi_ops.spark.jobs import hudi_write
from hudi_ops.spark.jobs.input_schema import check_input_schema
from hudi_ops.spark.jobs.result import JobResult
from hudi_ops.spark.jobs.source_frame import arrow_schema, read_source
from hudi_ops.spark.jobs.target import resolve_target
from hudi_ops.storage import Storage


def window(start: str, end: str) -> tuple[dt.date, dt.date]:
    first, last = _day(start, "--start"), _day(end, "--end")
    if first > last:
        raise InvalidInputError(f"the backfill window ends ({last}) before it starts ({first}); swap --start and --end")
    return first, last


def _day(text: str, flag: str) -> dt.date:
    try:
        return dt.date.fromisoformat(text)
    except ValueError:
        raise InvalidInputError(f"{flag} {text!r} is not a date; write YYYY-MM-DD") from None


def run(args: argparse.Namespace, options: dict[str, str], spark: Callable[[], Any]) -> JobResult:
    """`spark` starts the session, called only when there is work."""
    started = time.perf_counter()
    first, last = window(args.start, args.end)
    target = resolve_target(args.target_base_path, options, **args.table_flags)
    source = Storage.for_uri(args.source_path)
    key = backfill_checkpoint_key(first.isoformat(), last.isoformat())
    try:
        done = latest_value(MetaClient.open(args.target_base_path), key)
    except TableNotFoundError:
        done = None
    days = [first + dt.timedelta(days=n) for n in range((last - first).days + 1)]
    batches = [(d.isoformat(), source_files(source, f"dt={d.isoformat()}", args.source_format))
               for d in days if done is None or d.isoformat() > done]
    frames = [(day, read_source(spark(), source, files, args.source_format)) for day, files in batches if files]
    for day, frame in frames:  # every day is checked before the first is written
        check_input_schema(arrow_schema(frame), target, options, f"the source's dt={day}")
    after = f" after the window's checkpoint {done}" if done else ""
    result = JobResult("backfill", checkpoint=done,
                       reason=None if frames else f"nothing to backfill: no source files from {first} to {last}{after}")
    for day, frame in frames:
        run_id, write_options = hudi_write.write_options(
            target, args.op, options, job="backfill", extra_metadata={key: day})
        result = result.plus(hudi_write.write(spark(), frame, target, write_options, run_id), checkpoint=day)
        target = resolve_target(args.target_base_path, options, **args.table_flags)  # the first day created it
    total = round((time.perf_counter() - started) * 1000, 1)
    return JobResult(**{**result.to_dict(), "durations_ms": {"total": total}})
