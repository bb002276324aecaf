"""Rolling back failed writes (Hudi's LAZY failed-writes policy, as under optimistic concurrency).

A pending commit, deltacommit or replacecommit whose writer's heartbeat expired is rolled back:
`R.rollback.requested` (the plan: every file the failed instant wrote, from its markers, or from
the listing when it left none), `R.rollback.inflight`, the data files deleted, then the failed
instant's timeline files, then `R_C.rollback`. Data goes before timeline files, so nothing of
the failed write ever looks committed (hudi-v8.md §5.5). A live writer, whose heartbeat is fresh,
is never touched.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from hudi_ops.concurrency.heartbeat import heartbeat_path, is_expired
from hudi_ops.concurrency.locks.base import LockProvider, locked
from hudi_ops.concurrency.markers import WriteMarkers
from hudi_ops.format.fs_view import list_data_files
from hudi_ops.format.instant import Action, Instant, InstantTimeGenerator, State
from hudi_ops.format.meta_client import MetaClient
from hudi_ops.format.plans import (
    InstantInfo,
    RollbackMetadata,
    RollbackPartitionMetadata,
    RollbackPlan,
    RollbackRequest,
)
from hudi_ops.format.timeline import Timeline
from hudi_ops.format.transitions import create_requested, transition_to_completed, transition_to_inflight

_ROLLBACK_TARGETS = (Action.COMMIT, Action.DELTA_COMMIT, Action.REPLACE_COMMIT)


@dataclass(frozen=True)
class RollbackResult:
    rollback_instant: str
    rolled_back: str
    action: str
    files_deleted: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        return {**self.__dict__, "files_deleted": list(self.files_deleted)}


def failed_writes(meta: MetaClient, timeline: Timeline, *, interval_ms: int, tolerable_misses: int) -> list[Instant]:
    """Pending write instants whose heartbeat expired (compaction and clustering plans are not writes)."""
    return [
        i for i in timeline.pending
        if i.action in _ROLLBACK_TARGETS
        and is_expired(meta.storage, i.requested_time, interval_ms=interval_ms, tolerable_misses=tolerable_misses)
    ]


def rollback_failed_writes(
    meta: MetaClient, lock: LockProvider, *, lock_wait_s: float, interval_ms: int, tolerable_misses: int,
    dry_run: bool = False,
) -> list[RollbackResult]:
    timeline = meta.timeline()
    failed = failed_writes(meta, timeline, interval_ms=interval_ms, tolerable_misses=tolerable_misses)
    if dry_run:
        return [RollbackResult("", i.requested_time, i.action, tuple(_files_of(meta, i))) for i in failed]
    return [_rollback(meta, lock, lock_wait_s, i) for i in failed]


def _files_of(meta: MetaClient, failed: Instant) -> list[str]:
    """Table-relative paths of the data files `failed` wrote: from its markers, else by name.

    In table version 8 every file an instant writes carries its requested time in the name.
    """
    markers = WriteMarkers(meta.storage, failed.requested_time).all()
    if markers:
        return sorted({m.data_file_path for m in markers if meta.storage.exists(m.data_file_path)})
    bases, logs = list_data_files(meta.storage)
    return sorted(f.path for f in (*bases, *logs) if f.instant_time == failed.requested_time)


def _rollback(meta: MetaClient, lock: LockProvider, lock_wait_s: float, failed: Instant) -> RollbackResult:
    started = time.monotonic()
    storage = meta.storage
    files = _files_of(meta, failed)
    by_partition: dict[str, list[str]] = {}
    for path in files:
        by_partition.setdefault(path.rsplit("/", 1)[0] if "/" in path else "", []).append(path)
    target = InstantInfo(commit_time=failed.requested_time, action=failed.action)
    plan = RollbackPlan(
        instant_to_rollback=target,
        rollback_requests=tuple(
            RollbackRequest(partition_path=p, files_to_be_deleted=tuple(storage.uri_of(f) for f in paths))
            for p, paths in sorted(by_partition.items())
        ),
    )
    with locked(lock, lock_wait_s):
        timeline = meta.timeline()
        instant = InstantTimeGenerator.next(timeline.max_time)
        requested = create_requested(timeline, instant, Action.ROLLBACK, plan.to_avro_bytes())
    inflight = transition_to_inflight(timeline, requested)
    deleted = [f for f in files if storage.delete_file(f)]
    with locked(lock, lock_wait_s):
        timeline = meta.timeline()
        for state in sorted(timeline.states_of(failed.requested_time), key=lambda i: i.sort_key, reverse=True):
            if state.state is not State.COMPLETED:
                storage.delete_file(timeline.path_of(state))
        metadata = RollbackMetadata(
            start_rollback_time=instant,
            time_taken_in_millis=int((time.monotonic() - started) * 1000),
            total_files_deleted=len(deleted),
            commits_rollback=(failed.requested_time,),
            partition_metadata={
                p: RollbackPartitionMetadata(
                    partition_path=p, success_delete_files=tuple(storage.uri_of(f) for f in paths if f in deleted),
                    failed_delete_files=(),
                )
                for p, paths in sorted(by_partition.items())
            },
            instants_rollback=(target,),
        )
        lock.assert_held()
        completion = InstantTimeGenerator.next(timeline.max_time)
        transition_to_completed(timeline, inflight, completion, metadata.to_avro_bytes())
    WriteMarkers(storage, failed.requested_time).delete_all()
    storage.delete_file(heartbeat_path(failed.requested_time))
    return RollbackResult(instant, failed.requested_time, failed.action, tuple(deleted))

