"""Write conflicts: did another instant change a file group we rewrote after we planned the write?

Hudi's SimpleConcurrentFileWritesConflictResolutionStrategy (RFC-22): the candidates are write
instants that completed after our instant was requested, and pending clusterings; a candidate
conflicts when it wrote, replaced or plans to replace a file group we rewrote. Even a commit our
plan already saw counts: slices are ordered by requested time, so our rewrite (requested earlier)
would sort below its file and be hidden. File groups we create are new ids and never conflict.
"""

from __future__ import annotations

from collections.abc import Iterable

from hudi_ops.errors import WriteConflictError
from hudi_ops.format.commit_metadata import CommitMetadata, WriteStat
from hudi_ops.format.file_group import FileGroupId
from hudi_ops.format.fs_view import pending_service_file_groups
from hudi_ops.format.timeline import Timeline


def rewritten_file_groups(stats: Iterable[WriteStat]) -> set[FileGroupId]:
    """The existing file groups a write rewrote (new groups carry prevCommit "null")."""
    return {FileGroupId(s.partition_path or "", s.file_id) for s in stats if s.file_id and s.prev_commit != "null"}


def touched_file_groups(metadata: CommitMetadata) -> set[FileGroupId]:
    out = {FileGroupId(p, f) for p, ids in metadata.file_ids_by_partition().items() for f in ids}
    for p, ids in (metadata.partition_to_replace_file_ids or {}).items():
        out.update(FileGroupId(p, f) for f in ids)
    return out


def check_conflicts(timeline: Timeline, instant: str, ours: set[FileGroupId]) -> None:
    """Raise WriteConflictError if an instant that completed after `instant` started touched `ours`."""
    if not ours:
        return
    for other in timeline.completed_writes():
        if other.requested_time == instant or timeline.completion_time(other) <= instant:
            continue
        overlap = ours & touched_file_groups(timeline.commit_metadata(other))
        if overlap:
            raise WriteConflictError(instant, other.requested_time, (str(g) for g in overlap))
    _, clustering = pending_service_file_groups(timeline)
    planned = {g: t for g, t in clustering.items() if g in ours}
    if planned:
        t = min(planned.values())
        raise WriteConflictError(
            instant, t, (str(g) for g in planned), reason=f"pending clustering {t} will replace them"
        )
