"""The first write of a new table, one writer at a time.

Two pipelines started on a table that does not exist yet (an ingest beside a backfill that creates it)
would race inside Hudi: one creates `.hoodie/`, the other finds it without hoodie.properties and fails.
A writer that finds no table holds the creation lock until its first commit; one that waited finds
the table made and writes to it as to any other. A table is made once its first commit completed:
Hudi writes hoodie.properties as the first write starts, and a second writer that began before that
commit would write with its own source's schema beside the first's (Hudi refuses one of them at
commit: "incompatible concurrent schema evolution").
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Mapping
from types import TracebackType

from hudi_ops.errors import ConcurrentJobError, InvalidTableError, TableNotFoundError
from hudi_ops.format.meta_client import MetaClient
from hudi_ops.format.timeline import instant_files
from hudi_ops.locks.held_lock import HeldLock
from hudi_ops.locks.job_locks import creation_lock
from hudi_ops.options.occ import has_zookeeper_lock
from hudi_ops.storage import Storage

#: how long a writer waits for another to create the table: a first write's length
CREATION_WAIT_S = 600.0
#: how long a `.hoodie/` without a whole hoodie.properties must be left unchanged to be a dead creator's: Hudi
#: writes hoodie.properties within a second of making the folder
DEAD_CREATION_AGE_S = 60.0


def _clear_dead_creation(storage: Storage) -> None:
    """A `.hoodie/` without a whole hoodie.properties, found under the creation lock, is a first writer's that died
    while Hudi created the table (a living hudi-ops writer would hold the lock). Hudi cannot write on from
    it, and before hoodie.properties there is no instant, so no commit: it is removed and the table made
    anew. Not while it is fresh: a creator that takes no lock (another tool, a lost ZooKeeper session)
    may be at work in it."""
    if not storage.is_dir(".hoodie"):
        return
    instants = instant_files(storage)
    if instants:
        raise InvalidTableError(
            f"{storage.uri} has instants ({', '.join(instants[:3])}) but no whole .hoodie/hoodie.properties; restore "
            "that file from a backup or a copy of the table, or move the table aside and write a new one")
    newest = max([f.mtime_ms for f in storage.walk_files(".hoodie")] + [storage.mtime_ms(".hoodie")], default=0)
    age_s = time.time() - newest / 1000
    if age_s < DEAD_CREATION_AGE_S:
        raise ConcurrentJobError(
            f"{storage.uri} has a .hoodie/ without a whole hoodie.properties, changed {age_s:.0f}s ago: another "
            f"writer may be creating the table; retry (after {DEAD_CREATION_AGE_S:.0f}s unchanged it is taken for "
            "a dead creator's and cleared)")
    storage.delete_dir(".hoodie")


def table_exists(base_path: str) -> bool:
    try:
        MetaClient.open(base_path)
        return True
    except TableNotFoundError:
        return False


def first_commit_made(base_path: str) -> bool:
    """Whether the table exists and a commit of it completed (its creator's first, at least)."""
    try:
        return bool(MetaClient.open(base_path).timeline().completed)
    except TableNotFoundError:
        return False


class TableCreation:
    """`with TableCreation(base_path, options, name) as creation: ...; creation.done()` once the first
    commit completed (a backfill writes on without the lock); leaving the block ends it too."""

    def __init__(self, base_path: str, options: Mapping[str, str], table_name: str) -> None:
        self.base_path, self.options, self.table_name = base_path, options, table_name
        self._held: HeldLock | None = None

    def __enter__(self) -> TableCreation:
        if has_zookeeper_lock(self.options) and not first_commit_made(self.base_path):
            held = creation_lock(self.options, self.table_name, CREATION_WAIT_S)
            held.__enter__()
            self._held = held
            try:
                if table_exists(self.base_path):  # made by the writer we waited for (or one that died after
                    self.done()  # hoodie.properties: nothing of it committed, Hudi rolls its write back)
                else:
                    _clear_dead_creation(Storage.for_uri(self.base_path))
            except BaseException:
                self.done()
                raise
        return self

    def done(self) -> None:
        held, self._held = self._held, None
        if held is not None:
            held.__exit__(None, None, None)

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 tb: TracebackType | None) -> None:
        with contextlib.suppress(Exception):  # the job's own error matters more than the release's
            self.done()
