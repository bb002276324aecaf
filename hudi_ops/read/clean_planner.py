"""Which file slices Hudi's next clean removes, worked out without a JVM by the rules of Hudi's
`CleanPlanner` (Hudi 1.x), for the timeline view, `hudi-ops cleans --next` and the services' checks.

- The earliest commit to retain: KEEP_LATEST_COMMITS, the Nth latest completed commit when more than
  N are complete, but never after the earliest pending commit or plan; KEEP_LATEST_BY_HOURS, the
  first completed commit at or after now minus the hours; KEEP_LATEST_FILE_VERSIONS has none.
- File groups replaced by clustering or an overwrite go whole (by commits and hours: when their
  replacecommit is before the earliest commit to retain).
- Otherwise a slice goes when it is older than the earliest commit to retain, is not the group's
  latest, and is not the latest one before that commit (a query that started then still reads it);
  or, by file versions, when it is beyond the N newest.
- Never a savepointed slice, nor the slice a pending compaction compacts (which also counts as one
  of the versions kept).

The file-system view here merges the slice Hudi opens at a pending compaction's instant into the
slice the plan compacts, as Hudi's own latest view does; the rules above give the same files for it.
Hudi's planner looks only at partitions written since the last clean when it plans incrementally;
this model looks at all of them, so it can name slices that an incremental plan leaves for a later
full one (only after the policy was made stricter).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass

from hudi_ops.format.file_group import FileGroup, FileSlice
from hudi_ops.format.fs_view import FileSystemView
from hudi_ops.format.instant import Action, instant_moment
from hudi_ops.format.meta_client import MetaClient
from hudi_ops.format.timeline import Timeline
from hudi_ops.options.config_property import HoodieConfig
from hudi_ops.options.keys import CleanConfig
from hudi_ops.read.savepoints import savepointed_files

#: replaced by clustering or an overwrite
REPLACED = "replaced"
#: older than the earliest commit to retain, and read by no query that started after it
NOT_READABLE = "older than the earliest commit to retain"
#: beyond the number of file versions kept
OLD_VERSION = "beyond the file versions kept"


@dataclass(frozen=True)
class SliceToClean:
    partition: str
    file_id: str
    base_instant: str
    files: tuple[str, ...]  # table-relative paths: the base file and the slice's log files
    bytes: int
    why: str

    def to_dict(self) -> dict[str, object]:
        return {"partition": self.partition, "file_id": self.file_id, "base_instant": self.base_instant,
                "files": list(self.files), "bytes": self.bytes, "why": self.why}


@dataclass(frozen=True)
class NextClean:
    policy: str
    earliest_commit_to_retain: str | None
    slices: tuple[SliceToClean, ...]

    @property
    def files(self) -> list[str]:
        return [f for s in self.slices for f in s.files]

    @property
    def bytes(self) -> int:
        return sum(s.bytes for s in self.slices)

    def to_dict(self) -> dict[str, object]:
        return {"policy": self.policy, "earliest_commit_to_retain": self.earliest_commit_to_retain,
                "files": len(self.files), "bytes": self.bytes, "slices": [s.to_dict() for s in self.slices]}


def next_clean(meta: MetaClient, options: Mapping[str, str], *, now: dt.datetime | None = None,
               view: FileSystemView | None = None, zone_slack: dt.timedelta = dt.timedelta(0)) -> NextClean:
    """What a clean with `options` (`hoodie.cleaner.*`) would remove now. By hours, instant times are
    taken in the table's timeline zone (LOCAL: this machine's); `zone_slack` widens the cut both ways
    and takes the side that removes the most, for when the writers' zone is unknown."""
    config = HoodieConfig(dict(options))
    policy = config.require(CleanConfig.POLICY)
    view = view or meta.fs_view()
    local = meta.properties.timeline_timezone == "LOCAL"
    earliest = earliest_commit_to_retain(view.timeline, config, now, local=local, zone_slack=zone_slack)
    saved = savepointed_files(view.timeline)
    out: list[SliceToClean] = []
    by_versions = policy == "KEEP_LATEST_FILE_VERSIONS"
    if by_versions or earliest is not None:
        for group in view.groups:
            replaced_at = view.replaced.get(group.id)
            if replaced_at is None:
                continue
            if by_versions or replaced_at < earliest:
                out += [_to_clean(s, REPLACED) for s in group.slices if not _savepointed(s, saved)]
    for group in view.file_groups():
        pending = group.id in view.pending_compaction
        if by_versions:
            out += _beyond_versions(group, config.require(CleanConfig.FILE_VERSIONS_RETAINED), pending, saved)
        elif earliest is not None:
            out += _not_readable(group, earliest, saved)
    return NextClean(policy, earliest, tuple(out))


def earliest_commit_to_retain(timeline: Timeline, config: HoodieConfig, now: dt.datetime | None = None, *,
                              local: bool = False, zone_slack: dt.timedelta = dt.timedelta(0)) -> str | None:
    policy = config.require(CleanConfig.POLICY)
    completed = sorted(i.requested_time for i in timeline.completed_writes())
    if policy == "KEEP_LATEST_COMMITS":
        keep = config.require(CleanConfig.COMMITS_RETAINED)
        if keep == 0 or len(completed) <= keep:
            return None
        nth = completed[len(completed) - keep]
        plans = (Action.COMPACTION, Action.LOG_COMPACTION, Action.CLUSTERING)
        pending = min((i.requested_time for i in timeline.pending
                       if i.action in (*Action.WRITE_ACTIONS, *plans)), default=None)
        if pending is not None and nth > pending:
            return max((t for t in completed if t < pending), default=None)
        return nth
    if policy == "KEEP_LATEST_BY_HOURS":
        cutoff = (now or dt.datetime.now(dt.UTC)) - dt.timedelta(hours=config.require(CleanConfig.HOURS_RETAINED))
        at = {t: instant_moment(t, local=local) for t in completed}
        first = next((t for t in completed if at[t] >= cutoff + zone_slack), None)
        if first is not None or not completed:
            return first
        # a cut after every commit retains none; one just before the latest commit retains it alone
        return completed[-1] if at[completed[-1]] >= cutoff - zone_slack and zone_slack else None
    return None


def _beyond_versions(group: FileGroup, keep: int, pending: bool, saved: set[str]) -> list[SliceToClean]:
    # newest first; the slice a pending compaction compacts is kept and is one of the versions kept
    slices = group.slices[1:] if pending else group.slices
    keep = keep - 1 if pending else keep
    return [_to_clean(s, OLD_VERSION) for s in slices[max(keep, 0):] if not _savepointed(s, saved)]


def _not_readable(group: FileGroup, earliest: str, saved: set[str]) -> list[SliceToClean]:
    # the latest slice stays, which is also the one a pending compaction compacts
    latest = group.slices[0].base_instant
    before = next((s.base_instant for s in group.slices if s.base_instant < earliest), None)
    return [_to_clean(s, NOT_READABLE) for s in group.slices
            if s.base_instant not in (latest, before) and s.base_instant < earliest and not _savepointed(s, saved)]


def _savepointed(piece: FileSlice, saved: set[str]) -> bool:
    names = [f.name.file_name for f in (piece.base_file, *piece.log_files) if f is not None]
    return any(n in saved for n in names)


def _to_clean(piece: FileSlice, why: str) -> SliceToClean:
    files = tuple(f.path for f in (piece.base_file, *piece.log_files) if f is not None)
    return SliceToClean(piece.partition_path, piece.file_id, piece.base_instant, files, piece.total_size, why)
