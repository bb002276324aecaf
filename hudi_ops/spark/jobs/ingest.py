"""`ingest`: write the source files that arrived since the table's ingest checkpoint, in one commit.

The checkpoint (hudi_ops.read.ingest_work) rides in the commit's extra metadata, so a re-run never
ingests a file twice, a run with nothing new makes no commit, and other writers' commits in between
(backfills, table services) never move it.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from hudi_ops.job_specs import IngestSpec
from hudi_ops.job_specs.results import JobResult
from hudi_ops.read.ingest_work import ingest_work
from hudi_ops.read.pipeline_metadata import INGEST_CHECKPOINT_KEY
from hudi_ops.sources import position
from hudi_ops.spark.jobs import hudi_write
from hudi_ops.spark.jobs.input_schema import check_input_schema
from hudi_ops.spark.jobs.source_frame import arrow_schema, read_source
from hudi_ops.spark.jobs.table_creation import TableCreation
from hudi_ops.spark.jobs.target import resolve_target
from hudi_ops.storage import Storage


def run(spec: IngestSpec, options: dict[str, str], spark: Callable[[], Any]) -> JobResult:
    """`spark` starts the session, called only when there is work."""
    with TableCreation(spec.base_path, options, spec.table_name or "table"):
        return _ingest(spec, options, spark)


def _ingest(spec: IngestSpec, options: dict[str, str], spark: Callable[[], Any]) -> JobResult:
    started = time.perf_counter()
    target = resolve_target(spec.base_path, options, **spec.table_settings())
    source = Storage.for_uri(spec.source_path)
    work = ingest_work(spec.base_path, source, spec.source_format)
    if not work.files:
        return JobResult("ingest", checkpoint=work.checkpoint, reason=f"nothing to ingest: {work.describe()}")
    frame = read_source(spark(), source, work.files, spec.source_format, target)
    check_input_schema(arrow_schema(frame), target, options, f"the source ({len(work.files)} file(s))",
                       keys_only=spec.operation == "DELETE")
    run_id, write_options = hudi_write.write_options(
        target, spec.operation, options, job="ingest", extra_metadata={INGEST_CHECKPOINT_KEY: work.next_checkpoint()})
    prepared = time.perf_counter()
    written = hudi_write.write(spark(), frame, target, write_options, run_id, source.uri)
    done = time.perf_counter()
    result = JobResult("ingest", durations_ms={"prepare": round((prepared - started) * 1000, 1),
                                               "write": round((done - prepared) * 1000, 1),
                                               "total": round((done - started) * 1000, 1)})
    return result.plus(written.commit, checkpoint=position(work.files[-1]), after_commit=written.after_commit)
