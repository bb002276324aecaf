"""`backfill`: rewrite the source's `dt=YYYY-MM-DD` partitions from `--start` to `--end`, one commit a day.

The run's checkpoint (the last day committed, for this source, window and run) lets a killed or
conflicting run resume where it stopped, beside a steady ingestion on the same table; a new run of
the same window (corrections that came later) writes it again.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import time
from collections.abc import Callable
from typing import Any

from hudi_ops.errors import InvalidInputError, TableNotFoundError
from hudi_ops.format.meta_client import MetaClient
from hudi_ops.job_specs import BackfillSpec
from hudi_ops.job_specs.results import JobResult
from hudi_ops.locks.occ_options import backfill_defaults
from hudi_ops.read.pipeline_metadata import BACKFILL_CHECKPOINT_KEY, backfill_checkpoint, backfill_day
from hudi_ops.sources import source_files
from hudi_ops.spark.jobs import hudi_write
from hudi_ops.spark.jobs.input_schema import check_input_schema
from hudi_ops.spark.jobs.source_frame import arrow_schema, read_source
from hudi_ops.spark.jobs.table_creation import TableCreation
from hudi_ops.spark.jobs.target import resolve_target
from hudi_ops.storage import Storage


def run(spec: BackfillSpec, options: dict[str, str], spark: Callable[[], Any]) -> JobResult:
    """`spark` starts the session, called only when there is work."""
    options = {**options, **backfill_defaults(options)}
    with TableCreation(spec.base_path, options, spec.table_name or "table") as creation:
        return _backfill(spec, options, spark, creation)


def _backfill(spec: BackfillSpec, options: dict[str, str], spark: Callable[[], Any],
              creation: TableCreation) -> JobResult:
    started = time.perf_counter()
    first, last = spec.window()
    target = resolve_target(spec.base_path, options, **spec.table_settings())
    source = Storage.for_uri(spec.source_path)
    if not source.is_dir(""):
        raise InvalidInputError(f"the source folder {source.uri} does not exist; fix the backfill's source path")
    checkpoint = {"source": source.table_id, "start": first.isoformat(), "end": last.isoformat(),
                  "run": spec.run_id or ""}
    try:
        done = backfill_day(MetaClient.open(spec.base_path), **checkpoint)
    except TableNotFoundError:
        done = None
    days = [(first + dt.timedelta(days=n)).isoformat() for n in range((last - first).days + 1)]
    batches = [(day, source_files(source, f"dt={day}", spec.source_format)) for day in days if not done or day > done]
    frames = [(day, read_source(spark(), source, files, spec.source_format, target)) for day, files in batches if files]
    checked = target
    for day, frame in frames:  # every day before the first is written; a new table's days against the first
        columns = arrow_schema(frame)
        check_input_schema(columns, checked, options, f"the source's dt={day}", keys_only=spec.operation == "DELETE")
        if checked.schema is None:
            checked = dataclasses.replace(target, schema=columns)
    after = f" after the run's checkpoint {done}" if done else ""
    result = JobResult("backfill", checkpoint=done,
                       reason=None if frames else f"nothing to backfill: no source files from {first} to {last}{after}")
    for day, frame in frames:
        run_id, write_options = hudi_write.write_options(
            target, spec.operation, options, job="backfill",
            extra_metadata={BACKFILL_CHECKPOINT_KEY: backfill_checkpoint(**checkpoint, day=day)})
        written = hudi_write.write(spark(), frame, target, write_options, run_id, source.uri)
        creation.done()  # the table exists: other writers need not wait for the other days
        result = result.plus(written.commit, checkpoint=day, after_commit=written.after_commit)
    total = round((time.perf_counter() - started) * 1000, 1)
    return dataclasses.replace(result, durations_ms={"total": total})
