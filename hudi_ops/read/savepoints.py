"""Savepoints: the commits a table keeps from the cleaner and the archiver, to restore it to.

A completed `savepoint` instant holds Hudi's savepoint metadata: the data files of each partition that
the savepointed commit's readers need, which no clean may remove.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass

from hudi_ops.errors import InvalidInputError
from hudi_ops.format.instant import Action
from hudi_ops.format.meta_client import MetaClient
from hudi_ops.format.plans import SavepointMetadata
from hudi_ops.format.timeline import Timeline


@dataclass(frozen=True)
class SavepointSummary:
    instant: str  # the savepointed commit
    by: str
    comments: str
    files: int  # base files it keeps from the cleaner

    def to_dict(self) -> dict[str, object]:
        return {"instant": self.instant, "by": self.by, "comments": self.comments, "files": self.files}


def savepointed(meta: MetaClient) -> set[str]:
    """The commits that hold a completed savepoint."""
    return {i.requested_time for i in meta.timeline().completed if i.action == Action.SAVEPOINT}


def require_savepoint(meta: MetaClient, instant: str) -> None:
    """Refuses an instant that holds no savepoint, naming those that do."""
    held = savepointed(meta)
    if instant not in held:
        raise InvalidInputError(f"{meta.base_path} has no savepoint {instant} (savepoints: "
                                f"{', '.join(sorted(held)) or 'none'}); `hudi-ops savepoints` lists them")


def savepoints(meta: MetaClient, timeline: Timeline | None = None) -> list[SavepointSummary]:
    timeline = timeline or meta.timeline()
    out = []
    for inst in timeline.completed:
        if inst.action == Action.SAVEPOINT:
            metadata = SavepointMetadata.from_avro_bytes(timeline.read_bytes(inst))
            files = sum(len(p.savepoint_data_file) for p in metadata.partition_metadata.values())
            out.append(SavepointSummary(inst.requested_time, metadata.savepointed_by, metadata.comments, files))
    return out


def savepointed_files(timeline: Timeline) -> set[str]:
    """The names of the data files the table's savepoints keep."""
    out: set[str] = set()
    for inst in timeline.completed:
        if inst.action == Action.SAVEPOINT:
            metadata = SavepointMetadata.from_avro_bytes(timeline.read_bytes(inst))
            out.update(posixpath.basename(f) for p in metadata.partition_metadata.values()
                       for f in p.savepoint_data_file)
    return out
