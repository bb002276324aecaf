"""The file-system view: which file slices a reader sees at the latest instant.

Rules (Hudi's AbstractTableFileSystemView / HoodieFileGroup, checked against hudi-rs):
- a slice is keyed by its base file's instant; in layout 2 a log file joins the slice with the
  greatest base instant at or before its deltacommit's *completion* time, in layout 1 the slice
  named in the log file;
- only files of completed instants count (or of instants older than the active timeline);
- file groups replaced by a completed replacecommit are gone;
- file groups in a pending compaction plan are reported with the plan's instant.
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from hudi_ops.format.file_group import BaseFile, FileGroup, FileGroupId, FileSlice, LogFile
from hudi_ops.format.file_names import BaseFileName, LogFileName
from hudi_ops.format.instant import Action, State
from hudi_ops.format.plans import plan_file_groups
from hudi_ops.format.timeline import META_FOLDER, Timeline
from hudi_ops.storage import Storage


def list_data_files(storage: Storage) -> tuple[list[BaseFile], list[LogFile]]:
    """Base and log files of the table from a listing, skipping `.hoodie` and temp files."""
    return data_files((posixpath.dirname(f.path), f.name, f.size) for f in storage.walk_files("", skip_dot_folders=True)
                      if not _is_hidden_path(f.path))


def data_files(files: Iterable[tuple[str, str, int]]) -> tuple[list[BaseFile], list[LogFile]]:
    """Base and log files among (partition path, name, size); other files are left out."""
    bases, logs = [], []
    for partition, name, size in files:
        if (b := BaseFileName.try_parse(name)) is not None:
            bases.append(BaseFile(partition, b, size))
        elif (lg := LogFileName.try_parse(name)) is not None:
            logs.append(LogFile(partition, lg, size))
    return bases, logs


def _is_hidden_path(path: str) -> bool:
    # `.hoodie/` and any dot-folder hold no data; a log file itself starts with a dot, its folders do not
    return any(part.startswith(".") for part in path.split("/")[:-1]) or path.startswith(META_FOLDER + "/")


@dataclass(frozen=True)
class FileSystemView:
    timeline: Timeline
    groups: tuple[FileGroup, ...]
    #: file group -> requested time of the completed replacecommit that replaced it
    replaced: dict[FileGroupId, str]
    #: file group -> requested time of the pending compaction that plans to rewrite it
    pending_compaction: dict[FileGroupId, str]

    @classmethod
    def build(cls, timeline: Timeline, bases: list[BaseFile], logs: list[LogFile],
              archived: ArchivedCompletion) -> FileSystemView:
        """The view of the table's files (from a listing, or Hudi's metadata table) as of `timeline`."""
        return cls(timeline, file_groups(timeline, bases, logs, archived), _replaced_file_groups(timeline),
                   pending_compaction_file_groups(timeline))

    # -- queries -----------------------------------------------------------------------------------

    def file_groups(self) -> list[FileGroup]:
        """Live (not replaced) file groups with at least one visible slice."""
        return [g for g in self.groups if g.id not in self.replaced and g.slices]


#: the completion time of an archived instant, None when the archived timeline does not have it
ArchivedCompletion = Callable[[str], str | None]


def file_groups(timeline: Timeline, bases: list[BaseFile], logs: list[LogFile],
                archived: ArchivedCompletion = lambda _: None) -> tuple[FileGroup, ...]:
    """The files' groups and slices as of `timeline`: only files of its completed instants. A log file
    of an archived deltacommit joins its slice by the completion time `archived` finds, as Java's
    CompletionTimeQueryView looks it up in the archived timeline (asked only for such files)."""
    by_group: dict[FileGroupId, tuple[list[BaseFile], list[LogFile]]] = {}
    for b in bases:
        if timeline.is_completed(b.instant_time):
            by_group.setdefault(FileGroupId(b.partition_path, b.file_id), ([], []))[0].append(b)
    for lf in logs:
        # layout 1 names a log after its slice, not its writer: Java lists every log and leaves
        # the choice of blocks (by their instant headers) to the log reader
        if timeline.layout_version < 2 or timeline.is_completed(lf.instant_time):
            by_group.setdefault(FileGroupId(lf.partition_path, lf.file_id), ([], []))[1].append(lf)
    return tuple(_slice_group(gid, b, lg, timeline, archived) for gid, (b, lg) in sorted(by_group.items(), key=_key))


def _key(item: tuple[FileGroupId, object]) -> tuple[str, str]:
    return (item[0].partition_path, item[0].file_id)


def _slice_group(gid: FileGroupId, bases: list[BaseFile], logs: list[LogFile], timeline: Timeline,
                 archived: ArchivedCompletion) -> FileGroup:
    slices: dict[str, tuple[BaseFile | None, list[LogFile]]] = {}
    for b in bases:
        # two files with one instant (a retried task) - the later write token wins, as in Hudi
        current = slices.get(b.instant_time)
        if current is None or (current[0] is not None and current[0].name.write_token < b.name.write_token):
            slices[b.instant_time] = (b, current[1] if current else [])
    base_instants = sorted(slices)
    for lf in logs:
        key = _log_slice_key(lf, base_instants, timeline, archived)
        slices.setdefault(key, (None, []))[1].append(lf)
    ordered = [
        FileSlice(gid, t, base, tuple(sorted(lg, key=lambda f: f.name.sort_key)))
        for t, (base, lg) in sorted(slices.items(), reverse=True)
    ]
    return FileGroup(gid, ordered)


def _log_slice_key(lf: LogFile, base_instants: list[str], timeline: Timeline, archived: ArchivedCompletion) -> str:
    if timeline.layout_version < 2:
        return lf.instant_time
    done = timeline.completed_instant(lf.instant_time)
    completion = timeline.completion_time(done) if done is not None else None
    if completion is None and timeline.is_completed(lf.instant_time):  # older than the active timeline
        completion = archived(lf.instant_time)
    if completion is None:  # pending (or not found archived): the newest slice, as Java does
        return base_instants[-1] if base_instants else lf.instant_time
    earlier = [t for t in base_instants if t <= completion]
    return earlier[-1] if earlier else lf.instant_time


def _replaced_file_groups(timeline: Timeline) -> dict[FileGroupId, str]:
    out: dict[FileGroupId, str] = {}
    for inst in timeline.completed:
        if inst.action == Action.REPLACE_COMMIT:
            meta = timeline.commit_metadata(inst)
            for partition, file_ids in (meta.partition_to_replace_file_ids or {}).items():
                out.update(dict.fromkeys((FileGroupId(partition, fid) for fid in file_ids), inst.requested_time))
    return out


def pending_compaction_file_groups(timeline: Timeline) -> dict[FileGroupId, str]:
    """File groups named by the plans of pending compactions (their requested files hold the plans)."""
    out: dict[FileGroupId, str] = {}
    pending = {i.requested_time for i in timeline.pending}
    for inst in timeline.instants:
        if inst.state is not State.REQUESTED or inst.requested_time not in pending:
            continue
        if inst.action in (Action.COMPACTION, Action.LOG_COMPACTION):
            groups = plan_file_groups(inst.action, timeline.read_bytes(inst)) or ()
            out.update(dict.fromkeys(groups, inst.requested_time))
    return out
