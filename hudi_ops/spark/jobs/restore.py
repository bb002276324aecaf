"""`restore --savepoint T`: Hudi restores the table to a savepoint, rolling back every instant after
it, so that the table reads exactly as it did at T. Writers must not run meanwhile: the job refuses
while a write's heartbeat is alive."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from hudi_ops.errors import InvalidInputError
from hudi_ops.format.meta_client import MetaClient
from hudi_ops.job_specs import RestoreSpec
from hudi_ops.job_specs.results import ServiceResult, since
from hudi_ops.options.config_property import HoodieConfig
from hudi_ops.read.heartbeats import live_writes
from hudi_ops.read.savepoints import require_savepoint
from hudi_ops.spark.jobs.write_client import write_client


def run(spec: RestoreSpec, options: dict[str, str], spark: Callable[[], Any]) -> ServiceResult:
    started = time.perf_counter()
    meta = MetaClient.open(spec.base_path)
    require_savepoint(meta, spec.savepoint)
    running = live_writes(meta, HoodieConfig(options))
    if running:
        raise InvalidInputError(f"writes {', '.join(running)} of {meta.base_path} are running (their heartbeat is "
                                "alive): a restore under them would lose their commits; pause the table's writers "
                                "and wait for them to end, then restore")
    later = sorted(i.requested_time for i in meta.timeline().completed_writes() if i.requested_time > spec.savepoint)
    with write_client(spark(), meta, options) as client:
        client.java.restoreToSavepoint(spec.savepoint)
    return ServiceResult("restore", instant=spec.savepoint, outcome="restored",
                         details={"undone": later}, durations_ms=since(started))
