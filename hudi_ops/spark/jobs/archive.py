"""`archive`: Hudi's archiver moves old completed instants from the active timeline to its archived
(LSM) timeline, within `hoodie.keep.min.commits` / `hoodie.keep.max.commits` and never past the
cleaner's retained commits, a savepoint or a pending plan (Hudi's rules)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from hudi_ops.format.meta_client import MetaClient
from hudi_ops.job_specs import ArchiveSpec
from hudi_ops.job_specs.results import ServiceResult, since
from hudi_ops.spark.jobs.write_client import write_client


def run(spec: ArchiveSpec, options: dict[str, str], spark: Callable[[], Any]) -> ServiceResult:
    started = time.perf_counter()
    meta = MetaClient.open(spec.base_path)
    before = {i.requested_time for i in meta.timeline().completed}
    with write_client(spark(), meta, options) as client:
        client.java.archive()
    archived = sorted(before - {i.requested_time for i in meta.reload().timeline().completed})
    if not archived:
        return ServiceResult("archive", reason="Hudi's archival rules keep every instant active",
                             durations_ms=since(started))
    return ServiceResult("archive", instant=archived[-1], outcome="completed",
                         details={"archived": archived}, durations_ms=since(started))
