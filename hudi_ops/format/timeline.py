"""The active timeline: which instants a table has, and what they say.

Loaded once from a directory listing; a `Timeline` is an immutable snapshot of the instants Hudi's
writers had made by then: `reload` (or `MetaClient.reload().timeline()`) lists the folder again for later
ones.
"""

from __future__ import annotations

import posixpath
import threading
from collections import OrderedDict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import cached_property

from hudi_ops.errors import TimelineError
from hudi_ops.format.commit_metadata import CommitMetadata
from hudi_ops.format.instant import Action, Instant, State
from hudi_ops.storage import Storage

META_FOLDER = ".hoodie"
#: where layout 1 and layout 2 (with Hudi's default hoodie.timeline.path) keep their active instants
_TIMELINE_FOLDERS = (META_FOLDER, f"{META_FOLDER}/timeline")

#: actions on Java's "write timeline": their first instant bounds what counts as archived
_WRITE_TIMELINE_ACTIONS = frozenset({
    Action.COMMIT, Action.DELTA_COMMIT, Action.REPLACE_COMMIT, Action.COMPACTION,
    Action.LOG_COMPACTION, Action.CLUSTERING,
})


def instant_files(storage: Storage) -> list[str]:
    """The instant files of either layout's timeline folder, found without hoodie.properties (which names
    the folder): whether a table whose properties are missing or unfinished ever began an instant."""
    return [f.path for folder in _TIMELINE_FOLDERS for f in storage.list_files(folder)
            if Instant.try_parse(posixpath.basename(f.path))]


@dataclass(frozen=True)
class Timeline:
    """An immutable snapshot of the active timeline, instants in (requested time, state) order."""

    storage: Storage
    folder: str
    layout_version: int
    instants: tuple[Instant, ...]

    @classmethod
    def load(cls, storage: Storage, folder: str, *, layout_version: int) -> Timeline:
        """Layout 1 keeps instants in `.hoodie/`, layout 2 in `.hoodie/<hoodie.timeline.path>/`."""
        return cls(storage, folder, layout_version, ()).reload()

    def reload(self) -> Timeline:
        found = (Instant.try_parse(f.name) for f in self.storage.list_files(self.folder))
        instants = sorted((i for i in found if i is not None), key=lambda i: i.sort_key)
        return Timeline(self.storage, self.folder, self.layout_version, tuple(instants))

    # -- selection ---------------------------------------------------------------------------------

    def __iter__(self) -> Iterator[Instant]:
        return iter(self.instants)

    def __len__(self) -> int:
        return len(self.instants)

    @cached_property
    def _states(self) -> dict[str, list[Instant]]:
        out: dict[str, list[Instant]] = {}
        for i in self.instants:
            out.setdefault(i.requested_time, []).append(i)
        return out

    @cached_property
    def completed(self) -> tuple[Instant, ...]:
        """Completed instants, ordered by requested time."""
        return tuple(i for i in self.instants if i.is_completed)

    @cached_property
    def pending(self) -> tuple[Instant, ...]:
        """The latest state of every instant that has not completed."""
        done = {i.requested_time for i in self.completed}
        latest: dict[str, Instant] = {}
        for i in self.instants:
            if i.requested_time not in done:
                latest[i.requested_time] = i
        return tuple(latest.values())

    def completed_writes(self) -> tuple[Instant, ...]:
        """Completed commits, deltacommits and replacecommits: the instants that change data."""
        return tuple(i for i in self.completed if i.action in Action.WRITE_ACTIONS)

    def completed_instant(self, requested_time: str) -> Instant | None:
        for i in self._states.get(requested_time, ()):
            if i.is_completed:
                return i
        return None

    def filter(self, *, actions: Iterable[str] | None = None, until: str | None = None) -> Timeline:
        """Instants of the given actions whose requested time is at most `until`."""
        wanted = frozenset(actions) if actions is not None else None
        kept = tuple(
            i for i in self.instants
            if (wanted is None or i.action in wanted) and (until is None or i.requested_time <= until)
        )
        return Timeline(self.storage, self.folder, self.layout_version, kept)

    # -- completion --------------------------------------------------------------------------------

    def completion_time(self, instant: Instant) -> str:
        """Completion time, the order of RFC-22's END_COMMIT_TIME. Layout 1 has none: use the start."""
        return instant.completion_time or instant.requested_time

    @cached_property
    def first_write_instant_time(self) -> str | None:
        for i in self.instants:
            if i.action in _WRITE_TIMELINE_ACTIONS:
                return i.requested_time
        return None

    def is_completed(self, requested_time: str) -> bool:
        """Java's rule: completed on this timeline, or older than its first write instant (archived)."""
        if self.completed_instant(requested_time) is not None:
            return True
        first = self.first_write_instant_time
        return first is not None and requested_time < first

    # -- content -----------------------------------------------------------------------------------

    def path_of(self, instant: Instant) -> str:
        return posixpath.join(self.folder, instant.file_name)

    def read_bytes(self, instant: Instant) -> bytes:
        return self.storage.read_bytes(self.path_of(instant))

    def commit_metadata(self, instant: Instant) -> CommitMetadata:
        """Commit metadata of a commit/deltacommit/replacecommit instant (Avro in v8, JSON in v6)."""
        if instant.action not in (*Action.WRITE_ACTIONS,) or instant.state is State.REQUESTED:
            raise TimelineError(f"{instant} carries no commit metadata", instant=instant.requested_time)
        if not instant.is_completed:
            return CommitMetadata.parse(self.read_bytes(instant))
        # a completed instant file is immutable, and every look at the table (table schema, pipeline
        # checkpoints, replaced file groups, commit stats) reads the same commits again: keep them
        key = (self.storage.table_id, self.path_of(instant))
        with _CACHE_LOCK:
            cached = _COMPLETED_METADATA.get(key)
            if cached is not None:
                _COMPLETED_METADATA.move_to_end(key)
                return cached
        data = self.read_bytes(instant)
        parsed = CommitMetadata.parse(data)
        if data.strip():  # an empty file may be one a writer has not finished: read it again next time
            with _CACHE_LOCK:
                _COMPLETED_METADATA[key] = parsed
                if len(_COMPLETED_METADATA) > _CACHE_SIZE:
                    _COMPLETED_METADATA.popitem(last=False)
        return parsed

    def newest_writes(self) -> Iterator[tuple[Instant, CommitMetadata]]:
        """Completed writes with their commit metadata, the latest completed first. An instant archived
        since this timeline was listed is left out: Hudi's archiver writes it to the archived timeline
        before it deletes the file, so a reader that goes on there finds it."""
        for inst in sorted(self.completed_writes(), key=self.completion_time, reverse=True):
            try:
                metadata = self.commit_metadata(inst)
            except FileNotFoundError:
                continue
            yield inst, metadata


_CACHE_SIZE = 4096
_CACHE_LOCK = threading.Lock()
_COMPLETED_METADATA: OrderedDict[tuple[str, str], CommitMetadata] = OrderedDict()
