"""What the cleaner did, read from the timeline without a JVM.

Hudi's clean metadata names the files a clean deleted but not their sizes; the bytes come from the
write statistics of the commits that wrote those files (active and archived timeline), so a clean
is shown with the bytes it freed. A file whose commit is gone from both counts as unknown.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterable
from dataclasses import dataclass

from hudi_ops.format.commit_metadata import WriteStat
from hudi_ops.format.instant import Action
from hudi_ops.format.meta_client import MetaClient
from hudi_ops.format.plans import CleanMetadata
from hudi_ops.format.timeline import Timeline


@dataclass(frozen=True)
class CleanSummary:
    instant: str
    completed: str | None
    policy: str
    files: int  # deleted
    bytes: int | None  # what they held; None when a deleted file's commit is no longer known
    earliest_commit_to_retain: str
    partitions: int

    def to_dict(self) -> dict[str, object]:
        return {"instant": self.instant, "completed": self.completed, "policy": self.policy, "files": self.files,
                "bytes": self.bytes, "earliest_commit_to_retain": self.earliest_commit_to_retain,
                "partitions": self.partitions}


def cleans(meta: MetaClient, timeline: Timeline | None = None) -> list[CleanSummary]:
    """The completed cleans on the active timeline, oldest first."""
    timeline = timeline or meta.timeline()
    done = [i for i in timeline.completed if i.action == Action.CLEAN]
    if not done:
        return []
    sizes = written_file_sizes(meta, timeline)
    out = []
    for inst in done:
        data = timeline.read_bytes(inst)
        if not data:
            continue
        metadata = CleanMetadata.from_avro_bytes(data)
        deleted = [posixpath.join(p.partition_path, posixpath.basename(f))
                   for p in metadata.partition_metadata.values() for f in p.success_delete_files]
        known = [sizes.get(f) for f in deleted]
        policies = {p.policy for p in metadata.partition_metadata.values()}
        out.append(CleanSummary(
            inst.requested_time, inst.completion_time, ",".join(sorted(policies)) or "-", len(deleted),
            None if None in known else sum(s for s in known if s is not None), metadata.earliest_commit_to_retain,
            len(metadata.partition_metadata)))
    return out


def written_file_sizes(meta: MetaClient, timeline: Timeline | None = None) -> dict[str, int]:
    """Table-relative path -> size, from every write's statistics (the largest seen: a log file grows)."""
    sizes: dict[str, int] = {}

    def add(stats: Iterable[WriteStat]) -> None:
        for s in stats:
            if s.path and s.file_size_in_bytes > sizes.get(s.path, 0):
                sizes[s.path] = s.file_size_in_bytes

    timeline = timeline or meta.timeline()
    for inst in timeline.completed:
        if inst.action in Action.WRITE_ACTIONS:
            add(timeline.commit_metadata(inst).write_stats())
    for archived in meta.archived_timeline():
        if archived.action in Action.WRITE_ACTIONS and archived.metadata:
            add(archived.commit_metadata().write_stats())
    return sizes
