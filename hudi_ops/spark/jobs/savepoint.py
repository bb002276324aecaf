"""`savepoint`: Hudi's savepoint keeps a commit's file slices from the cleaner (and the archiver), so
the table can be read as of that commit and restored to it; `--delete T` removes one."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from hudi_ops.errors import InvalidInputError
from hudi_ops.format.meta_client import MetaClient
from hudi_ops.job_specs import SavepointSpec
from hudi_ops.job_specs.results import ServiceResult, since
from hudi_ops.read.savepoints import require_savepoint, savepointed
from hudi_ops.spark.jobs.write_client import write_client

USER = "hudi-ops"


def run(spec: SavepointSpec, options: dict[str, str], spark: Callable[[], Any]) -> ServiceResult:
    started = time.perf_counter()
    meta = MetaClient.open(spec.base_path)
    timeline = meta.timeline()
    savepoints = savepointed(meta)
    if spec.delete:
        require_savepoint(meta, spec.delete)
        with write_client(spark(), meta, options) as client:
            client.java.deleteSavepoint(spec.delete)
        return ServiceResult("savepoint", "delete", spec.delete, "deleted", durations_ms=since(started))
    writes = [i.requested_time for i in timeline.completed_writes()]
    instant = spec.instant_time or (writes[-1] if writes else None)
    if instant is None or instant not in writes:
        raise InvalidInputError(f"{instant or 'the latest commit'} is not a completed commit of {meta.base_path} "
                                "on its active timeline; pass one `hudi-ops commits` lists to --instant-time")
    if instant in savepoints:
        return ServiceResult("savepoint", "create", instant, "already savepointed", durations_ms=since(started))
    with write_client(spark(), meta, options) as client:
        client.java.savepoint(instant, USER, spec.comment or "")
    return ServiceResult("savepoint", "create", instant, "created", durations_ms=since(started))
