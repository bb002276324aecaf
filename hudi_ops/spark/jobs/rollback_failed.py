"""`rollback-failed`: Hudi rolls back the pending writes of failed writers, those whose heartbeat
expired (LAZY cleaning of failed writes, the policy of every multi-writer table)."""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from typing import Any

from hudi_ops.format.instant import Action
from hudi_ops.format.meta_client import MetaClient
from hudi_ops.spark.jobs.result import ServiceResult, since
from hudi_ops.spark.jobs.write_client import write_client


def run(args: argparse.Namespace, options: dict[str, str], spark: Callable[[], Any]) -> ServiceResult:
    started = time.perf_counter()
    meta = MetaClient.open(args.base_path)
    before = _pending_writes(meta)
    if not before:
        return ServiceResult("rollback-failed", reason="no pending write", durations_ms=since(started))
    with write_client(spark(), meta, options) as client:
        client.java.rollbackFailedWrites(client.table().getMetaClient())
    rolled_back = sorted(before - _pending_writes(meta))
    if not rolled_back:
        return ServiceResult("rollback-failed", reason=f"{len(before)} pending write(s), all with a live heartbeat",
                             durations_ms=since(started))
    return ServiceResult("rollback-failed", instant=rolled_back[-1], outcome="completed",
                         details={"rolled_back": rolled_back}, durations_ms=since(started))


def _pending_writes(meta: MetaClient) -> set[str]:
    return {i.requested_time for i in meta.timeline().pending if i.action in Action.WRITE_ACTIONS}
