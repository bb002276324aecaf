"""What a table has pending, read without a JVM: compaction and clustering plans (with their file
groups), clean plans and writes.

A plan is the Avro record in its `.requested` file; while an executor runs it the instant is
`.inflight`. Clustering plans are `clustering` instants (table version 8+) or `replacecommit` ones
whose requested metadata says CLUSTER (version 6), completing as replacecommits either way.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from hudi_ops.format.file_group import FileGroupId
from hudi_ops.format.instant import Action, Instant, State
from hudi_ops.format.plans import plan_file_groups
from hudi_ops.format.timeline import Timeline


@dataclass(frozen=True)
class PendingPlan:
    service: str  # compaction | clustering: named as Hudi names the plan's action (hudi_ops.read.table_services)
    instant: str  # the plan's requested time: the instant its execution completes as
    state: str  # REQUESTED, or INFLIGHT while (or after) an executor ran it
    file_groups: tuple[FileGroupId, ...]

    def to_dict(self) -> dict[str, object]:
        return {"service": self.service, "instant": self.instant, "state": self.state,
                "file_groups": [str(g) for g in self.file_groups]}


@functools.lru_cache(maxsize=128)
def pending_plans(timeline: Timeline, service: str) -> tuple[PendingPlan, ...]:
    """The pending plans of `service`, oldest first. Kept per look at the timeline: a requested plan
    never changes, and one look's checks (is there work for each service, a table's need) ask again."""
    pending = {i.requested_time: i for i in timeline.pending}
    out = []
    for inst in timeline.instants:
        latest = pending.get(inst.requested_time)
        if latest is None or inst.state is not State.REQUESTED:
            continue
        groups = _plan_file_groups(timeline, inst, service)
        if groups is not None:
            out.append(PendingPlan(service, inst.requested_time, latest.state.name, groups))
    return tuple(out)


def every_pending_plan(timeline: Timeline) -> tuple[PendingPlan, ...]:
    """The pending compaction plans, then the clustering ones, each oldest first."""
    return pending_plans(timeline, Action.COMPACTION) + pending_plans(timeline, Action.CLUSTERING)


def _plan_file_groups(timeline: Timeline, inst: Instant, service: str) -> tuple[FileGroupId, ...] | None:
    """The plan's file groups, or None when `inst` is not a plan of `service`."""
    actions = (Action.COMPACTION,) if service == Action.COMPACTION else (Action.CLUSTERING, Action.REPLACE_COMMIT)
    return plan_file_groups(inst.action, timeline.read_bytes(inst)) if inst.action in actions else None


def pending_cleans(timeline: Timeline) -> list[str]:
    """The clean plans not yet executed, oldest first."""
    return sorted(i.requested_time for i in timeline.pending if i.action == Action.CLEAN)


def pending_restores(timeline: Timeline) -> list[str]:
    """Restores begun and not completed: the table is part-way back to a savepoint."""
    return sorted(i.requested_time for i in timeline.pending if i.action == Action.RESTORE)


def pending_writes(timeline: Timeline) -> list[str]:
    """The writes (commits, deltacommits, replacecommits) not completed, oldest first."""
    return sorted(i.requested_time for i in timeline.pending if i.action in Action.WRITE_ACTIONS)
