"""A table's compactions and clusterings: the completed ones with what they wrote, the pending ones with their
plans (hudi-cli's `compactions show all` and `clustering` listings, without a JVM).

A completed compaction is a `commit` whose metadata says COMPACT (its plan was a `compaction` instant); a
completed clustering a `replacecommit` whose metadata says CLUSTER (an insert overwrite also completes as a
replacecommit, and is not one). Hudi's archiver keeps a completed instant's metadata, so archived runs read
the same way.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass

from hudi_ops.format.archived_timeline import ArchivedInstant
from hudi_ops.format.commit_metadata import CommitMetadata
from hudi_ops.format.instant import Action, State
from hudi_ops.format.timeline import Timeline
from hudi_ops.read.pending_plans import pending_plans
from hudi_ops.read.table_overview import COMPLETED, PENDING, stats_of

#: the action a service's run completes as, and the operation type its commit metadata records
_COMPLETES_AS = {Action.COMPACTION: (Action.COMMIT, "COMPACT"), Action.CLUSTERING: (Action.REPLACE_COMMIT, "CLUSTER")}


@dataclass(frozen=True, slots=True)
class ServiceRun:
    """One compaction or clustering. Pending ones have a plan and nothing written yet (None)."""

    service: str  # compaction | clustering
    instant: str  # the plan's requested time, which its commit completes as
    status: str  # completed | pending
    state: str  # COMPLETED; REQUESTED or INFLIGHT while pending
    completed: str | None
    file_groups: int  # the plan's: compacted, or replaced by the clustering
    files: int | None  # written
    writes: int | None  # records written
    bytes: int | None
    archived: bool = False

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


def service_runs(timeline: Timeline, service: str, archived: Iterable[ArchivedInstant] = ()) -> list[ServiceRun]:
    """The completed runs of `service` among `archived` and on `timeline`, in completion order, then its
    pending plans, oldest first."""
    action, operation = _COMPLETES_AS[service]
    found = [(a.requested_time, a.completion_time or a.requested_time, a.commit_metadata(), True)
             for a in archived if a.action == action]
    found += [(i.requested_time, timeline.completion_time(i), timeline.commit_metadata(i), False)
              for i in timeline.completed if i.action == action]
    done = [_completed(service, *f) for f in found if f[2].operation_type == operation]
    pending = [ServiceRun(service, p.instant, PENDING, p.state, None, len(p.file_groups), None, None, None)
               for p in pending_plans(timeline, service)]
    return sorted(done, key=lambda r: r.completed or r.instant) + pending


def _completed(service: str, instant: str, completed: str, metadata: CommitMetadata, archived: bool) -> ServiceRun:
    stats = stats_of(instant, completed, _COMPLETES_AS[service][0], metadata)
    groups = (sum(len(ids) for ids in (metadata.partition_to_replace_file_ids or {}).values())
              if service == Action.CLUSTERING else stats.files)  # a compaction writes one file per file group
    return ServiceRun(service, instant, COMPLETED, State.COMPLETED.name, completed, groups, stats.files,
                      stats.writes, stats.bytes, archived)
