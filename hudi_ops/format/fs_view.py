"""The file-system view: which file slices a reader sees, at the latest instant or as of one.

Rules (Hudi's AbstractTableFileSystemView / HoodieFileGroup, checked against hudi-rs):
- a slice is keyed by its base file's instant; in layout 2 a log file joins the slice with the
  greatest base instant at or before its deltacommit's *completion* time, in layout 1 the slice
  named in the log file;
- only files of completed instants count (or of instants older than the active timeline);
- file groups replaced by a completed replacecommit are gone;
- file groups in a pending compaction or clustering plan are reported, so writers leave them alone.
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from hudi_ops.format.file_group import BaseFile, FileGroup, FileGroupId, FileSlice, LogFile
from hudi_ops.format.file_names import BaseFileName, LogFileName
from hudi_ops.format.instant import Action, State
from hudi_ops.format.plans import CompactionPlan, RequestedReplaceMetadata
from hudi_ops.format.timeline import META_FOLDER, Timeline
from hudi_ops.storage import FileInfo, Storage


def list_data_files(storage: Storage, partitions: Iterable[str] | None = None) -> tuple[list[BaseFile], list[LogFile]]:
    """Base and log files of the table (or of the given partitions), skipping `.hoodie` and temp files."""
    if partitions is None:
        infos: list[FileInfo] = [f for f in storage.walk_files("") if not _is_hidden_path(f.path)]
    else:
        infos = [f for p in partitions for f in storage.list_files(p)]
    bases, logs = [], []
    for f in infos:
        partition = posixpath.dirname(f.path)
        if (b := BaseFileName.try_parse(f.name)) is not None:
            bases.append(BaseFile(partition, b, f.size))
        elif (lg := LogFileName.try_parse(f.name)) is not None:
            logs.append(LogFile(partition, lg, f.size))
    return bases, logs


def _is_hidden_path(path: str) -> bool:
    # `.hoodie/` and any dot-folder hold no data; a log file itself starts with a dot, its folders do not
    return any(part.startswith(".") for part in path.split("/")[:-1]) or path.startswith(META_FOLDER + "/")


@dataclass(frozen=True)
class FileSystemView:
    timeline: Timeline
    groups: tuple[FileGroup, ...]
    replaced: frozenset[FileGroupId]
    #: file group -> requested time of the pending compaction / clustering that plans to rewrite it
    pending_compaction: dict[FileGroupId, str]
    pending_clustering: dict[FileGroupId, str]

    @classmethod
    def build(
        cls,
        storage: Storage,
        timeline: Timeline,
        *,
        as_of: str | None = None,
        partitions: Iterable[str] | None = None,
    ) -> FileSystemView:
        visible = timeline.filter(until=as_of) if as_of is not None else timeline
        bases, logs = list_data_files(storage, partitions)
        by_group: dict[FileGroupId, tuple[list[BaseFile], list[LogFile]]] = {}
        for b in bases:
            if _visible(visible, b.instant_time, as_of):
                by_group.setdefault(FileGroupId(b.partition_path, b.file_id), ([], []))[0].append(b)
        for lf in logs:
            # layout 1 names a log after its slice, not its writer: Java lists every log and leaves
            # the choice of blocks (by their instant headers) to the log reader
            if visible.layout_version < 2 or _visible(visible, lf.instant_time, as_of):
                by_group.setdefault(FileGroupId(lf.partition_path, lf.file_id), ([], []))[1].append(lf)
        groups = tuple(_slice_group(gid, b, lg, timeline) for gid, (b, lg) in sorted(by_group.items(), key=_key))
        compaction, clustering = pending_service_file_groups(timeline)
        return cls(visible, groups, _replaced_file_groups(visible), compaction, clustering)

    # -- queries -----------------------------------------------------------------------------------

    def file_groups(self) -> list[FileGroup]:
        """Live (not replaced) file groups with at least one visible slice."""
        return [g for g in self.groups if g.id not in self.replaced and g.slices]

    def latest_slices(self) -> list[FileSlice]:
        return [s for g in self.file_groups() if (s := g.latest_slice) is not None]

    def latest_base_files(self) -> list[BaseFile]:
        """The newest base file of every live file group (what a read-optimized query reads)."""
        return [b for g in self.file_groups() if (b := g.latest_base_file) is not None]

    def partitions(self) -> list[str]:
        return sorted({g.id.partition_path for g in self.file_groups()})


def _key(item: tuple[FileGroupId, object]) -> tuple[str, str]:
    return (item[0].partition_path, item[0].file_id)


def _visible(timeline: Timeline, instant_time: str, as_of: str | None) -> bool:
    return (as_of is None or instant_time <= as_of) and timeline.is_completed(instant_time)


def has_committed_data(timeline: Timeline) -> Callable[[LogFile], bool]:
    """Whether a log file holds data of a completed instant of `timeline`.

    In layout 2 the log's name carries its deltacommit. In layout 1 it carries the slice's base
    instant, so a log counts when a completed deltacommit lists it as written, or when it predates
    the active timeline (archived); logs of failed writes and rollback command blocks do not.
    """
    if timeline.layout_version >= 2:
        return lambda lf: timeline.is_completed(lf.instant_time)
    written = {
        stat.path
        for inst in timeline.completed
        if inst.action == Action.DELTA_COMMIT
        for stat in timeline.commit_metadata(inst).write_stats()
        if stat.path
    }
    first = timeline.first_write_instant_time
    return lambda lf: lf.path in written or (first is not None and lf.instant_time < first)


def _slice_group(gid: FileGroupId, bases: list[BaseFile], logs: list[LogFile], timeline: Timeline) -> FileGroup:
    slices: dict[str, tuple[BaseFile | None, list[LogFile]]] = {}
    for b in bases:
        # two files with one instant (a retried task) - the later write token wins, as in Hudi
        current = slices.get(b.instant_time)
        if current is None or (current[0] is not None and current[0].name.write_token < b.name.write_token):
            slices[b.instant_time] = (b, current[1] if current else [])
    base_instants = sorted(slices)
    for lf in logs:
        key = _log_slice_key(lf, base_instants, timeline)
        slices.setdefault(key, (None, []))[1].append(lf)
    ordered = [
        FileSlice(gid, t, base, tuple(sorted(lg, key=lambda f: f.name.sort_key)))
        for t, (base, lg) in sorted(slices.items(), reverse=True)
    ]
    return FileGroup(gid, ordered)


def _log_slice_key(lf: LogFile, base_instants: list[str], timeline: Timeline) -> str:
    if timeline.layout_version < 2:
        return lf.instant_time
    done = timeline.completed_instant(lf.instant_time)
    if done is None:  # pending (or archived): the newest slice, as Java does
        return base_instants[-1] if base_instants else lf.instant_time
    completion = timeline.completion_time(done)
    earlier = [t for t in base_instants if t <= completion]
    return earlier[-1] if earlier else lf.instant_time


def _replaced_file_groups(timeline: Timeline) -> frozenset[FileGroupId]:
    out: set[FileGroupId] = set()
    for inst in timeline.completed:
        if inst.action == Action.REPLACE_COMMIT:
            meta = timeline.commit_metadata(inst)
            for partition, file_ids in (meta.partition_to_replace_file_ids or {}).items():
                out.update(FileGroupId(partition, fid) for fid in file_ids)
    return frozenset(out)


def pending_service_file_groups(timeline: Timeline) -> tuple[dict[FileGroupId, str], dict[FileGroupId, str]]:
    """File groups named by the plans of pending compactions and clusterings (requested files hold the plans)."""
    compaction: dict[FileGroupId, str] = {}
    clustering: dict[FileGroupId, str] = {}
    pending = {i.requested_time for i in timeline.pending}
    for inst in timeline.instants:
        if inst.state is not State.REQUESTED or inst.requested_time not in pending:
            continue
        if inst.action in (Action.COMPACTION, Action.LOG_COMPACTION):
            plan = CompactionPlan.from_avro_bytes(timeline.read_bytes(inst))
            for op in plan.operations or ():
                compaction[FileGroupId(op.partition_path or "", op.file_id or "")] = inst.requested_time
        elif inst.action in (Action.CLUSTERING, Action.REPLACE_COMMIT):
            data = timeline.read_bytes(inst)
            meta = RequestedReplaceMetadata.from_avro_bytes(data) if data else None
            if meta is None or meta.clustering_plan is None:
                continue  # insert_overwrite plans carry no clustering plan
            for group in meta.clustering_plan.input_groups or ():
                for sl in group.slices or ():
                    clustering[FileGroupId(sl.partition_path or "", sl.file_id or "")] = inst.requested_time
    return compaction, clustering
