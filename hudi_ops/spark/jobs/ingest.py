"""`ingest`: write the source files the table's ingest has not taken yet, in one commit (or in
commits of at most `--source-limit` bytes and `--source-limit-files` files).

The files are found by name, whatever their modification times (hudi_ops.sources.files), and each
commit records the files it took in its extra metadata, so a re-run never ingests a file twice, a
file that lands late is still taken, a run with nothing new makes no commit, and other writers'
commits in between (backfills, table services) change nothing. The whole job holds the source's
batch fence (hudi_ops.spark.jobs.batch_fence): a second attempt of the run waits, then finds what the
first committed and reports it as "already committed". A Kafka topic's ingest: hudi_ops.spark.jobs.kafka_ingest;
an upstream Hudi table's: hudi_ops.spark.jobs.upstream_ingest.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from typing import Any

from hudi_ops.format.meta_client import MetaClient
from hudi_ops.job_specs import IngestSpec
from hudi_ops.job_specs.results import ALREADY_COMMITTED, JobResult
from hudi_ops.job_specs.writes import KAFKA_KINDS
from hudi_ops.read.pipeline_metadata import INGEST_CHECKPOINT_KEY, ingest_checkpoints
from hudi_ops.read.table_overview import commit_stats_of
from hudi_ops.sources.files import IngestWork, ingest_work
from hudi_ops.spark.jobs import hudi_write, kafka_ingest, upstream_ingest
from hudi_ops.spark.jobs.batch_fence import BatchFence, ingest_batch
from hudi_ops.spark.jobs.input_schema import check_input_schema
from hudi_ops.spark.jobs.table_creation import TableCreation
from hudi_ops.spark.jobs.target import resolve_target
from hudi_ops.spark.sources import arrow_schema
from hudi_ops.spark.sources.files import read_source
from hudi_ops.storage import Storage


def run(spec: IngestSpec, options: dict[str, str], spark: Callable[[], Any]) -> JobResult:
    """`spark` starts the session, called only when there is work."""
    if spec.source_kind in KAFKA_KINDS:
        return kafka_ingest.run(spec, options, spark)
    if spec.source_kind == "hudi":
        return upstream_ingest.run(spec, options, spark)
    source = Storage.for_uri(spec.source_path)
    name = spec.table_name or "table"
    with BatchFence(spec.base_path, options, name, ingest_batch(source.table_id), spec.wait_seconds) as fence, \
            TableCreation(spec.base_path, options, name):
        return _ingest(spec, options, spark, source, fence)


def _ingest(spec: IngestSpec, options: dict[str, str], spark: Callable[[], Any], source: Storage,
            fence: BatchFence) -> JobResult:
    started = time.perf_counter()
    target = resolve_target(spec.base_path, options, **spec.table_settings())
    work = ingest_work(spec.base_path, source, spec.source_format)
    if not work.files:
        return _nothing_to_do(spec, work, started)
    result = JobResult("ingest", warnings=work.warnings())
    prepare_ms = write_ms = 0.0
    for batch in work.batches(spec.run_id or "", max_files=spec.source_limit_files, max_bytes=spec.source_limit):
        began = time.perf_counter()
        frame = read_source(spark(), source, batch.files, spec.source_format, target)
        check_input_schema(arrow_schema(frame), target, options, f"the source ({len(batch.files)} file(s))",
                           keys_only=spec.operation == "DELETE")
        run_id, write_options = hudi_write.write_options(
            target, spec.operation, fence.write_options(options), job="ingest",
            extra_metadata={INGEST_CHECKPOINT_KEY: batch.checkpoint.to_json()})
        prepared = time.perf_counter()
        written = hudi_write.write(spark(), frame, target, write_options, run_id, source.uri)
        prepare_ms += (prepared - began) * 1000
        write_ms += (time.perf_counter() - prepared) * 1000
        result = result.plus(written.commit, checkpoint=batch.checkpoint.position, after_commit=written.after_commit)
        if not target.exists:  # the next batch writes to the table this one made
            target = resolve_target(spec.base_path, options, **spec.table_settings())
    total = (time.perf_counter() - started) * 1000
    return dataclasses.replace(result, durations_ms={"prepare": round(prepare_ms, 1), "write": round(write_ms, 1),
                                                     "total": round(total, 1)})


def _nothing_to_do(spec: IngestSpec, work: IngestWork, started: float) -> JobResult:
    """No file left: this run's own earlier attempt may have taken them (the fence made us wait for it)."""
    total = {"total": round((time.perf_counter() - started) * 1000, 1)}
    if spec.run_id and work.checkpoint is not None:  # the table exists and has an ingest of the source
        meta = MetaClient.open(spec.base_path)
        ours = next((c for c in ingest_checkpoints(meta, work.source, archived=False) if c.run == spec.run_id), None)
        if ours is not None:
            timeline = meta.timeline()
            done = timeline.completed_instant(ours.instant)
            stats = commit_stats_of(timeline, done) if done else None
            return JobResult("ingest", instant=ours.instant, outcome=ALREADY_COMMITTED,
                             operation=stats.operation if stats else None, checkpoint=work.position,
                             reason=f"run {spec.run_id} committed its files in {ours.instant} (another attempt of "
                                    "it); nothing written", warnings=work.warnings(), durations_ms=total)
    return JobResult("ingest", checkpoint=work.position, reason=f"nothing to ingest: {work.describe()}",
                     warnings=work.warnings(), durations_ms=total)
