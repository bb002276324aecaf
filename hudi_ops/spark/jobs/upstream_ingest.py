"""`ingest --source-kind hudi`: the changes an upstream Hudi table committed since the derived table's
checkpoint (hudi_ops.sources.hudi_table), in one commit that carries the upstream's last completion time
consumed. The whole job holds the upstream's batch fence, as a files ingest holds its folder's."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from typing import Any

from hudi_ops.job_specs import IngestSpec
from hudi_ops.job_specs.results import JobResult, nothing_to_ingest, since
from hudi_ops.read.pipeline_metadata import INGEST_CHECKPOINT_KEY
from hudi_ops.sources.hudi_table import source_id, upstream_work
from hudi_ops.spark.jobs import hudi_write
from hudi_ops.spark.jobs.batch_fence import BatchFence, ingest_batch
from hudi_ops.spark.jobs.input_schema import check_input_schema
from hudi_ops.spark.jobs.table_creation import TableCreation
from hudi_ops.spark.jobs.target import resolve_target
from hudi_ops.spark.sources import arrow_schema
from hudi_ops.spark.sources.hudi_table import read_upstream
from hudi_ops.storage import Storage


def run(spec: IngestSpec, options: dict[str, str], spark: Callable[[], Any]) -> JobResult:
    """`spark` starts the session, called only when there is work."""
    upstream = str(spec.source_path)
    name = spec.table_name or "table"
    fence_id = ingest_batch(source_id(Storage.for_uri(upstream)))
    with BatchFence(spec.base_path, options, name, fence_id, spec.wait_seconds) as fence, \
            TableCreation(spec.base_path, options, name):
        started = time.perf_counter()
        target = resolve_target(spec.base_path, options, **spec.table_settings())
        work = upstream_work(spec.base_path, upstream, options)
        if not work.writes:
            done = work.checkpoint
            return nothing_to_ingest(spec.run_id, (done.instant, done.run) if done else None,
                                     done.position if done else None, started=started, idle=work.describe(),
                                     committed=f"the upstream's changes up to {done.position if done else ''}")
        frame = read_upstream(spark(), work, target.record_key_fields, options)
        check_input_schema(arrow_schema(frame), target, options,
                           f"the changes of upstream table {upstream} after {work.begin}")
        run_id, write_options = hudi_write.write_options(
            target, spec.operation, fence.write_options(options), job="ingest",
            extra_metadata={INGEST_CHECKPOINT_KEY: work.ingest_checkpoint(spec.run_id or "").to_json()})
        written = hudi_write.write(spark(), frame, target, write_options, run_id, f"upstream table {upstream}",
                                   commit_metadata=work.commit_metadata())
        result = JobResult("ingest", warnings=("the upstream's changes were gone: read its whole snapshot, so rows it "
                                               "deleted meanwhile stay in this table",) if work.full_scan else ())
        result = result.plus(written.commit, checkpoint=work.end, after_commit=written.after_commit)
        return dataclasses.replace(result, durations_ms=since(started))
