"""`rollback-failed`: Hudi rolls back the pending writes of failed writers, those whose heartbeat
expired (LAZY cleaning of failed writes, the policy of every multi-writer table)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from hudi_ops.errors import ConfigError, RollbackRaceError
from hudi_ops.format.meta_client import MetaClient
from hudi_ops.job_specs import RollbackFailedSpec
from hudi_ops.job_specs.results import ServiceResult, since
from hudi_ops.options.config_property import HoodieConfig
from hudi_ops.options.keys import FailedWritesConfig
from hudi_ops.read.pending_plans import pending_writes
from hudi_ops.spark.jobs.failed_writes import rollback_turn
from hudi_ops.spark.jobs.write_client import write_client


def run(spec: RollbackFailedSpec, options: dict[str, str], spark: Callable[[], Any]) -> ServiceResult:
    started = time.perf_counter()
    policy = HoodieConfig(options).require(FailedWritesConfig.POLICY)
    if policy != "LAZY":  # under EAGER Hudi would roll back every pending write, running ones too
        raise ConfigError(f"rollback-failed rolls back only writes whose heartbeat expired, which needs "
                          f"{FailedWritesConfig.POLICY.name}=LAZY (what every multi-writer table sets; here it is "
                          f"{policy}): pass the table's lock options, or let the next write roll failures back")
    meta = MetaClient.open(spec.base_path)
    before = _pending_writes(meta)
    if not before:
        return ServiceResult("rollback-failed", reason="no pending write", durations_ms=since(started))
    raced: tuple[str, ...] = ()
    with rollback_turn(meta, options) as turn:
        before = _pending_writes(meta)  # what another rollback left
        if before:
            try:
                with write_client(spark(), meta.reload(), options) as client:  # after the turn's wait
                    turn.spare_starting_writes()
                    client.java.rollbackFailedWrites(client.table().getMetaClient())
            except RollbackRaceError as e:  # rolled back all the same, which is what this job is for
                raced = (str(e),)
    warnings = (*turn.warnings, *raced)
    timeline = meta.reload().timeline()
    # gone from the pending ones without completing: rolled back (a write may also have completed meanwhile)
    rolled_back = sorted(i for i in before - set(pending_writes(timeline)) if timeline.completed_instant(i) is None)
    if not rolled_back:
        why = f"{len(before)} pending write(s), all with a live heartbeat" if before else \
            "no pending write: another process rolled them back"
        return ServiceResult("rollback-failed", reason=why, warnings=warnings, durations_ms=since(started))
    return ServiceResult("rollback-failed", instant=rolled_back[-1], outcome="completed", warnings=warnings,
                         details={"rolled_back": rolled_back}, durations_ms=since(started))


def _pending_writes(meta: MetaClient) -> set[str]:
    return set(pending_writes(meta.reload().timeline()))  # asked again after another rollback's turn
