"""`backfill`: rewrite the source's `dt=YYYY-MM-DD` partitions from `--start` to `--end`, one commit a day.

Each day's commit records the run and the day (its checkpoint), so an attempt of the run skips the days
the run committed, beside a steady ingestion on the same table, and a new run of the same window
(corrections that came later) writes it again. Each day is written under its batch fence
(hudi_ops.spark.jobs.batch_fence): two attempts of a run, or two runs of one window, never write a
day at once; the second finds the day committed by its run and skips it, or writes it after the first,
when its keys are in the table and the write (an upsert) updates them.
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
from hudi_ops.job_specs.results import ALREADY_COMMITTED, JobResult
from hudi_ops.job_specs.writes import PARTITION_OPERATIONS
from hudi_ops.options.config_property import HoodieConfig
from hudi_ops.options.keys import DataSourceWriteConfig, WriteConfig
from hudi_ops.read.pipeline_metadata import BACKFILL_CHECKPOINT_KEY, backfill_checkpoint, backfill_days
from hudi_ops.sources.files import source_files
from hudi_ops.spark.jobs import hudi_write
from hudi_ops.spark.jobs.batch_fence import BatchFence, backfill_batch
from hudi_ops.spark.jobs.input_schema import check_input_schema
from hudi_ops.spark.jobs.table_creation import TableCreation
from hudi_ops.spark.jobs.target import TargetTable, resolve_target
from hudi_ops.spark.sources import arrow_schema
from hudi_ops.spark.sources.files import read_source
from hudi_ops.storage import Storage


def run(spec: BackfillSpec, options: dict[str, str], spark: Callable[[], Any]) -> JobResult:
    """`spark` starts the session, called only when there is work."""
    with TableCreation(spec.base_path, options, spec.table_name or "table") as creation:
        return _backfill(spec, options, spark, creation)


def _committed_days(base_path: str, checkpoint: dict[str, str], *, archived: bool = True) -> dict[str, str]:
    """The days the run committed, each with its commit."""
    try:
        return backfill_days(MetaClient.open(base_path), **checkpoint, archived=archived)
    except TableNotFoundError:
        return {}


def _backfill(spec: BackfillSpec, options: dict[str, str], spark: Callable[[], Any],
              creation: TableCreation) -> JobResult:
    started = time.perf_counter()
    first, last = spec.window()
    target = resolve_target(spec.base_path, options, **spec.table_settings())
    source = Storage.for_uri(spec.source_path) if spec.source_path else None  # none: a DELETE_PARTITION's
    if source is not None and spec.operation != "DELETE_PARTITION" and not source.is_dir(""):
        raise InvalidInputError(f"the source folder {source.uri} does not exist; fix the backfill's source path")
    checkpoint = {"source": source.table_id if source else "", "start": first.isoformat(), "end": last.isoformat(),
                  "run": spec.run_id or ""}
    done = _committed_days(spec.base_path, checkpoint)
    days = [(first + dt.timedelta(days=n)).isoformat() for n in range((last - first).days + 1)]
    if spec.operation in PARTITION_OPERATIONS:
        _partitioned_by_day(target, spec.operation)
    if spec.operation == "DELETE_PARTITION":
        paths, existing = _day_partitions(target, options, days), _partitions(target)
        frames = [(day, None) for day in days if day not in done and paths[day] in existing]
    else:
        assert source is not None  # BackfillSpec.validate: every other operation reads a source
        batches = [(day, files) for day in days if day not in done and (files := source_files(source, f"dt={day}",
                                                                                                 spec.source_format))]
        frames = [(day, read_source(spark(), source, files, spec.source_format, target)) for day, files in batches]
    checked = target
    for day, frame in frames:  # every day before the first is written; a new table's days against the first
        if frame is None:
            continue
        columns = arrow_schema(frame)
        check_input_schema(columns, checked, options, f"the source's dt={day}", keys_only=spec.operation == "DELETE")
        if checked.schema is None:
            checked = dataclasses.replace(target, schema=columns)
    nothing = f"no partitions to delete from {first} to {last}" if spec.operation == "DELETE_PARTITION" else \
        f"no source files from {first} to {last}"
    result = JobResult("backfill", reason=None if frames or done else f"nothing to backfill: {nothing}")
    for day, frame in frames:
        with BatchFence(spec.base_path, options, spec.table_name or "table", backfill_batch(day),
                        spec.wait_seconds) as fence:
            # another attempt of the run may have written it while this one waited (it is recent)
            if day in (again := _committed_days(spec.base_path, checkpoint, archived=False)):
                done[day] = again[day]
                continue
            run_id, write_options = hudi_write.write_options(
                target, spec.operation, fence.write_options(options), job="backfill",
                extra_metadata={BACKFILL_CHECKPOINT_KEY: backfill_checkpoint(**checkpoint, day=day)})
            if frame is None:  # Hudi's delete_partition takes its partitions from the option, none from rows
                write_options[PARTITIONS_TO_DELETE] = paths[day]
                frame = spark().createDataFrame([], f"`{DAY_FIELD}` string")
            written = hudi_write.write(spark(), frame, target, write_options, run_id, source.uri if source else "")
        creation.done()  # the table exists: other writers need not wait for the other days
        result = result.plus(written.commit, checkpoint=day, after_commit=written.after_commit)
    if done and not result.commits:
        day = max(done)
        result = dataclasses.replace(result, instant=done[day], outcome=ALREADY_COMMITTED, checkpoint=day,
                                     reason=f"run {spec.run_id or '(none)'} committed every day of the window with "
                                            f"files ({', '.join(sorted(done))}) in an earlier attempt; nothing written")
    total = round((time.perf_counter() - started) * 1000, 1)
    return dataclasses.replace(result, durations_ms={"total": total})


#: the column a backfill's days are: its source's `dt=YYYY-MM-DD` folders
DAY_FIELD = "dt"
PARTITIONS_TO_DELETE = DataSourceWriteConfig.PARTITIONS_TO_DELETE.name


def _partitioned_by_day(target: TargetTable, operation: str) -> None:
    """A partition operation replaces or deletes whole partitions: each must be one day, or a day's batch
    would replace (or delete) other days' rows too."""
    if target.partition_fields != (DAY_FIELD,):
        fields = ", ".join(target.partition_fields) or "nothing"
        raise InvalidInputError(f"--op {operation} replaces or deletes whole partitions, one per day: it needs a "
                                f"table partitioned by `{DAY_FIELD}` alone, and {target.base_path} is partitioned "
                                f"by {fields}; use UPSERT (or DELETE of the day's keys)")


def _day_partitions(target: TargetTable, options: dict[str, str], days: list[str]) -> dict[str, str]:
    """Each day's partition path, as Hudi's key generator names it (`dt=<day>` when hive-style)."""
    props = MetaClient.open(target.base_path).properties.values if target.exists else {}
    key = WriteConfig.HIVE_STYLE_PARTITIONING
    hive = HoodieConfig({**options, **{k: v for k, v in props.items() if k == key.name}}).get(key) == "TRUE"
    return {day: f"{DAY_FIELD}={day}" if hive else day for day in days}


def _partitions(target: TargetTable) -> set[str]:
    """The partitions that hold file groups (none for a table not created yet)."""
    if not target.exists:
        return set()
    meta = MetaClient.open(target.base_path)
    return {group.id.partition_path for group in meta.fs_view(meta.timeline()).file_groups()}
