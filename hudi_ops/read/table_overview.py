"""A table at a glance: its timeline as spans of time, its live file groups, its latest commits' stats,
and its table services: pending plans, cleans, savepoints and what the next clean removes.

What an operator asks of a table shared by many pipelines: which writes ran when and overlapped,
which are still pending, which were rolled back, and what the latest writes did. Read-only; the
Airflow timeline view and the demo print it.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass
from datetime import datetime

from hudi_ops.format.archived_timeline import ArchivedInstant
from hudi_ops.format.commit_metadata import CommitMetadata
from hudi_ops.format.fs_view import FileSystemView
from hudi_ops.format.instant import Action, Instant, State, parse_instant_time
from hudi_ops.format.meta_client import MetaClient
from hudi_ops.format.plans import RollbackMetadata
from hudi_ops.format.timeline import Timeline
from hudi_ops.read.clean_planner import NextClean, next_clean
from hudi_ops.read.pending_plans import PendingPlan, every_pending_plan
from hudi_ops.read.pipeline_metadata import pipeline_of
from hudi_ops.read.savepoints import SavepointSummary, savepoints
from hudi_ops.read.service_history import CleanSummary, cleans
from hudi_ops.s3_settings import S3Settings

PENDING = "pending"
COMPLETED = "completed"
ROLLED_BACK = "rolled back"


@dataclass(frozen=True, slots=True)
class InstantSpan:
    """One instant from requested to completion time; `completion_time` is None while it is pending,
    and for completed instants of timeline layout 1, which does not record it."""

    requested_time: str
    action: str
    status: str  # PENDING, COMPLETED or ROLLED_BACK
    completion_time: str | None = None
    state: str = State.COMPLETED.value  # the pending instant's state: requested or inflight
    rolled_back_by: str | None = None
    pipeline: str | None = None  # of a completed write by a hudi-ops job: `ingest`, `backfill of 2026-11-20`

    @property
    def requested_at(self) -> datetime:
        return parse_instant_time(self.requested_time)

    @property
    def completed_at(self) -> datetime | None:
        return parse_instant_time(self.completion_time) if self.completion_time else None

    @property
    def rolled_back_at(self) -> datetime | None:
        return parse_instant_time(self.rolled_back_by) if self.rolled_back_by else None


@dataclass(frozen=True, slots=True)
class FileGroupSummary:
    """A live file group and its latest slice (names as `hudi-ops file-groups` prints them)."""

    partition: str
    file_id: str
    slices: int
    base_instant: str
    base_file: str | None
    log_files: int
    bytes: int


@dataclass(frozen=True, slots=True)
class CommitStats:
    """What a completed write did (names as `hudi-ops commits` prints them); `completed` is the requested
    time on timeline layout 1, which records no completion time."""

    instant: str
    completed: str
    action: str
    operation: str | None
    pipeline: str | None  # `ingest`, `backfill of 2026-11-20`; None for other writers
    files: int
    writes: int
    inserts: int
    updates: int
    deletes: int
    bytes: int
    partitions: int


@dataclass(frozen=True)
class TableOverview:
    name: str
    base_path: str
    table_type: str
    table_version: int
    instants: tuple[InstantSpan, ...]
    file_groups: tuple[FileGroupSummary, ...]
    latest_commits: tuple[CommitStats, ...]
    pending_plans: tuple[PendingPlan, ...]
    cleans: tuple[CleanSummary, ...]
    savepoints: tuple[SavepointSummary, ...]
    next_clean: NextClean

    @classmethod
    def load(cls, base_path: str | os.PathLike[str], *, latest_commits: int = 10, latest_cleans: int = 10,
             clean_options: Mapping[str, str] | None = None, s3: S3Settings | None = None) -> TableOverview:
        """`clean_options`: the table's cleaner settings (`hoodie.cleaner.*`), for the next clean; `s3`: how
        to reach a table on S3."""
        meta = MetaClient.open(base_path, s3=s3)
        timeline = meta.timeline()
        props = meta.properties
        view = meta.fs_view(timeline)
        return cls(
            name=props.table_name, base_path=meta.base_path, table_type=props.table_type,
            table_version=props.table_version, instants=instant_spans(timeline, meta.commit_action),
            file_groups=tuple(file_group_summaries(meta, timeline, view)),
            latest_commits=tuple(reversed(commit_stats(timeline)[-latest_commits:])),
            pending_plans=every_pending_plan(timeline),
            cleans=tuple(cleans(meta, timeline, latest=latest_cleans)), savepoints=tuple(savepoints(meta, timeline)),
            next_clean=next_clean(meta, clean_options or {}, view=view),
        )

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


def instant_spans(timeline: Timeline, write_action: str) -> tuple[InstantSpan, ...]:
    """Every instant on the active timeline, plus those a completed rollback removed from it (taken for
    `write_action`, the table's commit action, when the rollback does not record theirs)."""
    rolled_back: dict[str, tuple[str, str]] = {}  # target time -> (its action, rollback time)
    for inst in timeline.completed:
        if inst.action == Action.ROLLBACK:
            meta = RollbackMetadata.from_avro_bytes(timeline.read_bytes(inst))
            actions = {i.commit_time: i.action for i in meta.instants_rollback}
            for target in meta.commits_rollback:
                rolled_back[target] = (actions.get(target, write_action), inst.requested_time)
    spans = [_completed_span(timeline, i) for i in timeline.completed]
    for inst in timeline.pending:
        if inst.requested_time in rolled_back:  # the rollback completed but left the target's files
            continue
        spans.append(InstantSpan(inst.requested_time, inst.action, PENDING, None, state=inst.state.value))
    for target, (action, by) in rolled_back.items():
        spans.append(InstantSpan(target, action, ROLLED_BACK, None, state=ROLLED_BACK, rolled_back_by=by))
    return tuple(sorted(spans, key=lambda s: s.requested_time))


def _completed_span(timeline: Timeline, inst: Instant) -> InstantSpan:
    write = inst.action in Action.WRITE_ACTIONS  # not a savepoint, which has its commit's time
    pipeline = pipeline_of(timeline.commit_metadata(inst).extra_metadata) if write else None
    return InstantSpan(inst.requested_time, inst.action, COMPLETED, inst.completion_time, pipeline=pipeline)


def file_group_summaries(meta: MetaClient, timeline: Timeline, view: FileSystemView | None = None
                         ) -> list[FileGroupSummary]:
    out = []
    for group in (view or meta.fs_view(timeline)).file_groups():
        latest = group.latest_slice
        if latest is None:
            continue
        out.append(FileGroupSummary(
            partition=group.id.partition_path, file_id=group.id.file_id, slices=len(group.slices),
            base_instant=latest.base_instant,
            base_file=latest.base_file.name.file_name if latest.base_file else None,
            log_files=len(latest.log_files), bytes=latest.total_size,
        ))
    return sorted(out, key=lambda g: (g.partition, g.file_id))


def commit_stats(timeline: Timeline) -> list[CommitStats]:
    """Every completed write on the active timeline, in completion order."""
    return [commit_stats_of(timeline, i) for i in sorted(timeline.completed_writes(), key=timeline.completion_time)]


def archived_commit_stats(archived: Iterable[ArchivedInstant]) -> list[CommitStats]:
    """Every write among `archived` (instants of the archived timeline), in completion order."""
    return sorted((stats_of(a.requested_time, a.completion_time or a.requested_time, a.action, a.commit_metadata())
                   for a in archived if a.action in Action.WRITE_ACTIONS), key=lambda c: c.completed)


def commit_stats_of(timeline: Timeline, inst: Instant) -> CommitStats:
    return stats_of(inst.requested_time, timeline.completion_time(inst), inst.action, timeline.commit_metadata(inst))


def stats_of(instant: str, completed: str, action: str, metadata: CommitMetadata) -> CommitStats:
    """What the write `instant` did, from its commit metadata (of the active or the archived timeline)."""
    stats = list(metadata.write_stats())
    return CommitStats(
        instant=instant, completed=completed, action=action,
        operation=metadata.operation_type, pipeline=pipeline_of(metadata.extra_metadata), files=len(stats),
        writes=sum(s.num_writes or 0 for s in stats), inserts=sum(s.num_inserts or 0 for s in stats),
        updates=sum(s.num_update_writes or 0 for s in stats), deletes=sum(s.num_deletes or 0 for s in stats),
        bytes=sum(s.total_write_bytes or 0 for s in stats), partitions=len({s.partition_path for s in stats}),
    )
