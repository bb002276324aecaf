"""`clean`: Hudi's cleaner removes the file slices its policy no longer keeps readable.

Policies and keys are Hudi's (`hoodie.cleaner.policy` KEEP_LATEST_COMMITS with
`hoodie.cleaner.commits.retained`, KEEP_LATEST_FILE_VERSIONS with
`hoodie.cleaner.fileversions.retained`, KEEP_LATEST_BY_HOURS with `hoodie.cleaner.hours.retained`).
Savepointed slices and slices of pending compactions or clusterings are never removed: Hudi's
planner skips them. The files and bytes a clean removes are measured from its plan before it runs;
`--dry-run` asks Hudi's planner (CleanPlanner) what a clean would remove and writes nothing.
"""

from __future__ import annotations

import contextlib
import posixpath
import time
from collections.abc import Callable, Iterable
from dataclasses import replace
from typing import Any

from hudi_ops.errors import RollbackRaceError
from hudi_ops.format.instant import Action, State
from hudi_ops.format.meta_client import MetaClient
from hudi_ops.format.plans import CleanerPlan
from hudi_ops.job_specs import CleanSpec
from hudi_ops.job_specs.results import ServiceResult, since
from hudi_ops.options.config_property import HoodieConfig
from hudi_ops.options.keys import CleanConfig
from hudi_ops.read.pending_plans import pending_cleans
from hudi_ops.spark.jobs.failed_writes import rollback_turn
from hudi_ops.spark.jobs.write_client import WriteClient, write_client


def run(spec: CleanSpec, options: dict[str, str], spark: Callable[[], Any]) -> ServiceResult:
    started = time.perf_counter()
    meta = MetaClient.open(spec.base_path)
    policy = HoodieConfig(options).get(CleanConfig.POLICY)  # a policy Hudi lacks is bad input, named here
    if spec.dry_run:
        with write_client(spark(), meta, options) as client:
            files = _planned_files(client)
        return _result(spec, meta, None, "planned", files, started, policy)
    if spec.mode == "execute" and not _pending_cleans(meta):
        return ServiceResult("clean", spec.mode, reason="no pending clean plan", details={"policy": policy},
                             durations_ms=since(started))
    nothing = "the policy keeps every file slice: nothing to clean"
    # scheduling rolls nothing back; executing a clean does first (LAZY)
    turn = contextlib.nullcontext(None) if spec.mode == "schedule" else rollback_turn(meta, options)
    try:
        with turn as rollbacks, write_client(spark(), meta.reload(), options) as client:  # after the turn's wait
            scheduled = None
            if spec.mode != "execute":
                made = client.java.scheduleTableService(client.none(), _clean_service(client))
                scheduled = made.get() if made.isPresent() else None
            plans = _pending_cleans(meta)
            if spec.mode == "schedule":
                if scheduled is None:
                    return ServiceResult("clean", spec.mode, reason=nothing, details={"policy": policy},
                                         durations_ms=since(started))
                plan = next(p for i, p in plans if i == scheduled)
                return _result(spec, meta, scheduled, "scheduled", _plan_files(meta, plan), started, policy)
            files = [f for _, plan in plans for f in _plan_files(meta, plan)]
            sized = _sizes(meta, files)  # measured before Hudi deletes them
            # runs the pending plans without planning another; with or without one, Hudi's clean also rolls
            # back failed writes (LAZY)
            rollbacks.spare_starting_writes()
            client.java.clean(False)
    except RollbackRaceError as raced:  # the failed write is rolled back all the same: the clean's aim
        left = [i for i, _ in _pending_cleans(meta)]
        still = [f"clean plan(s) {', '.join(left)} still pending: the next clean runs them"] if left else []
        return ServiceResult("clean", spec.mode, outcome="rolled back by another process",
                             reason="another process rolled back the failed write this clean was rolling back",
                             warnings=(*(rollbacks.warnings if rollbacks else ()), str(raced), *still),
                             details={"policy": policy}, durations_ms=since(started))
    warnings = rollbacks.warnings
    if not plans:
        return ServiceResult("clean", spec.mode, reason=nothing, details={"policy": policy},
                             durations_ms=since(started))
    done = meta.reload().timeline()
    left = [i for i, _ in plans if done.completed_instant(i) is None]
    result = _result(spec, meta, plans[-1][0], "completed", files, started, policy, sized)
    still = (f"clean plan(s) {', '.join(left)} still pending",) if left else ()
    return replace(result, warnings=(*warnings, *still))


def _clean_service(client: WriteClient) -> Any:
    return client.jvm.org.apache.hudi.common.model.TableServiceType.CLEAN


def _pending_cleans(meta: MetaClient) -> list[tuple[str, CleanerPlan]]:
    timeline = meta.reload().timeline()  # asked again after Hudi planned or cleaned
    pending = set(pending_cleans(timeline))
    return [(i.requested_time, CleanerPlan.from_avro_bytes(timeline.read_bytes(i)))
            for i in timeline.instants if i.action == Action.CLEAN and i.requested_time in pending
            and i.state is State.REQUESTED]


def _plan_files(meta: MetaClient, plan: CleanerPlan) -> list[str]:
    """The plan's files, as paths relative to the table."""
    out = []
    for infos in (plan.file_paths_to_be_deleted_per_partition or {}).values():
        out.extend(_relative(meta, i.file_path or "") for i in infos)
    for partition, names in (plan.files_to_be_deleted_per_partition or {}).items():  # plan version 1
        out.extend(posixpath.join(partition, n) for n in names)
    return out


def _planned_files(client: WriteClient) -> list[str]:
    """What a clean would remove now, as Hudi's planner decides it (nothing is written)."""
    planner = client.jvm.org.apache.hudi.table.action.clean.CleanPlanner(client.context, client.table(),
                                                                         client.config)
    earliest = planner.getEarliestCommitToRetain()
    out = []
    for partition in planner.getPartitionPathsToClean(earliest):
        for info in planner.getDeletePaths(partition, earliest).getRight():
            out.append(_relative(client.meta, info.getFilePath()))
    return out


def _relative(meta: MetaClient, path: str) -> str:
    base = meta.base_path.rstrip("/") + "/"
    for prefix in (base, "file:" + base, "file://" + base):
        if path.startswith(prefix):
            return path[len(prefix):]
    return path


def _sizes(meta: MetaClient, files: Iterable[str]) -> dict[str, int]:
    out = {}
    for f in files:
        info = meta.storage.file_info(f)
        out[f] = info.size if info is not None else 0
    return out


def _result(spec: CleanSpec, meta: MetaClient, instant: str | None, outcome: str, files: list[str],
            started: float, policy: str | None, sized: dict[str, int] | None = None) -> ServiceResult:
    sized = sized if sized is not None else _sizes(meta, files)
    return ServiceResult("clean", "dry-run" if spec.dry_run else spec.mode, instant, outcome, files=len(files),
                         bytes=sum(sized.values()), details={"policy": policy, "files": sorted(files)},
                         durations_ms=since(started))
