"""What the cleaner did, read from the timeline without a JVM.

Hudi's clean metadata names the files a clean deleted but not their sizes; the bytes come from the
write statistics of the commits on the active timeline that wrote those files (a file's name says
which), so a clean is shown with the bytes it freed. A file whose commit was archived counts as
unknown: reading the archived timeline on every view of the timeline page would cost more with every
commit the table ever had.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterable
from dataclasses import dataclass

from hudi_ops.format.file_names import BaseFileName, LogFileName
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


def cleans(meta: MetaClient, timeline: Timeline | None = None, *, latest: int | None = None) -> list[CleanSummary]:
    """The completed cleans on the active timeline (the `latest` ones), oldest first."""
    timeline = timeline or meta.timeline()
    done = [i for i in timeline.completed if i.action == Action.CLEAN]
    out = []
    for inst in done[-latest:] if latest else done:
        data = timeline.read_bytes(inst)
        if not data:
            continue
        metadata = CleanMetadata.from_avro_bytes(data)
        deleted = [posixpath.join(p.partition_path, posixpath.basename(f))
                   for p in metadata.partition_metadata.values() for f in p.success_delete_files]
        sizes = written_file_sizes(timeline, deleted, until=inst.requested_time)
        known = [sizes.get(f) for f in deleted]
        policies = {p.policy for p in metadata.partition_metadata.values()}
        out.append(CleanSummary(
            inst.requested_time, inst.completion_time, ",".join(sorted(policies)) or "-", len(deleted),
            None if None in known else sum(s for s in known if s is not None), metadata.earliest_commit_to_retain,
            len(metadata.partition_metadata)))
    return out


def written_file_sizes(timeline: Timeline, paths: Iterable[str], *, until: str) -> dict[str, int]:
    """Table-relative path -> size of each of `paths`, from the write statistics of the active timeline's
    commits that may have written it: a base file's commit is named in it; a log file's writes are the
    commits from its slice's base instant to `until` (the largest size seen: a log file grows)."""
    wanted = set(paths)
    writes = timeline.completed_writes()
    writers: set[str] = set()
    for path in wanted:
        name = posixpath.basename(path)
        if base := BaseFileName.try_parse(name):
            writers.add(base.instant_time)
        elif log := LogFileName.try_parse(name):
            writers.update(i.requested_time for i in writes if log.instant_time <= i.requested_time <= until)
    sizes: dict[str, int] = {}
    for inst in writes:
        if inst.requested_time in writers:
            for stat in timeline.commit_metadata(inst).write_stats():
                if stat.path in wanted and stat.file_size_in_bytes > sizes.get(stat.path, 0):
                    sizes[stat.path] = stat.file_size_in_bytes
    return sizes
