"""`backfill`: rewrite the source's `dt=YYYY-MM-DD` partitions from `--start` to `--end`, one commit a day.

The run's checkpoint (the last day committed, for this source, window and run) lets a killed or
conflicting run resume where it stopped, beside a steady ingestion on the same table; a new run of
the same window (corrections that came later) writes it again.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime as dt
import time
from collections.abc import Callable
from typing import Any

from hudi_ops.errors import InvalidInputError, TableNotFoundError
from hudi_ops.format.meta_client import MetaClient
from hudi_ops.read.pipeline_metadata import BACKFILL_CHECKPOINT_KEY, backfill_checkpoint, backfill_day
from hudi_ops.sources import source_files
from hudi_ops.spark.jobs import hudi_write
from hudi_ops.spark.jobs.input_schema import check_input_schema
from hudi_ops.spark.jobs.result import JobResult
from hudi_ops.spark.jobs.source_frame import arrow_schema, read_source
from hudi_ops.spark.jobs.table_creation import TableCreation
from hudi_ops.spark.jobs.target import resolve_target
from hudi_ops.storage import Storage


def window(start: str, end: str) -> tuple[dt.date, dt.date]:
    first, last = parse_day(start, "--start"), parse_day(end, "--end")
    if first > last:
        raise InvalidInputError(f"the backfill window ends ({last}) before it starts ({first}); swap --start and --end")
    return first, last


def parse_day(text: str, flag: str) -> dt.date:
    try:
        return dt.date.fromisoformat(text)
    except ValueError:
        raise InvalidInputError(f"{flag} {text!r} is not a date; write YYYY-MM-DD") from None


def run(args: argparse.Namespace, options: dict[str, str], spark: Callable[[], Any]) -> JobResult:
    """`spark` starts the session, called only when there is work."""
    with TableCreation(args.target_base_path, options, args.target_table or "table") as creation:
        return _backfill(args, options, spark, creation)


def _backfill(args: argparse.Namespace, options: dict[str, str], spark: Callable[[], Any],
              creation: TableCreation) -> JobResult:
    started = time.perf_counter()
    first, last = window(args.start, args.end)
    target = resolve_target(args.target_base_path, options, **args.table_flags)
    source = Storage.for_uri(args.source_path)
    if not source.is_dir(""):
        raise InvalidInputError(f"the source folder {source.uri} does not exist; fix the backfill's source path")
    checkpoint = {"source": source.table_id, "start": first.isoformat(), "end": last.isoformat(),
                  "run": args.run_id or ""}
    try:
        done = backfill_day(MetaClient.open(args.target_base_path), **checkpoint)
    except TableNotFoundError:
        done = None
    days = [(first + dt.timedelta(days=n)).isoformat() for n in range((last - first).days + 1)]
    batches = [(day, source_files(source, f"dt={day}", args.source_format)) for day in days if not done or day > done]
    frames = [(day, read_source(spark(), source, files, args.source_format, target)) for day, files in batches if files]
    checked = target
    for day, frame in frames:  # every day before the first is written; a new table's days against the first
        columns = arrow_schema(frame)
        check_input_schema(columns, checked, options, f"the source's dt={day}", keys_only=args.op == "DELETE")
        if checked.schema is None:
            checked = dataclasses.replace(target, schema=columns)
    after = f" after the run's checkpoint {done}" if done else ""
    result = JobResult("backfill", checkpoint=done,
                       reason=None if frames else f"nothing to backfill: no source files from {first} to {last}{after}")
    for day, frame in frames:
        run_id, write_options = hudi_write.write_options(
            target, args.op, options, job="backfill",
            extra_metadata={BACKFILL_CHECKPOINT_KEY: backfill_checkpoint(**checkpoint, day=day)})
        written = hudi_write.write(spark(), frame, target, write_options, run_id, source.uri)
        creation.done()  # the table exists: other writers need not wait for the other days
        result = result.plus(written, checkpoint=day)
    total = round((time.perf_counter() - started) * 1000, 1)
    return dataclasses.replace(result, durations_ms={"total": total})
