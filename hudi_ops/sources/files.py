"""Files in a landing folder (`--source-kind files`): its data files in arrival order, and the ones the
table's ingest has not taken yet, whatever their modification times.

A position, `<mtime ms, 15 digits>:<path>`, sorts as the files arrived, so an ingest checkpoint's
position is the newest file ingested. Modification times do not always arrive in order (a file copied
with its old time, two producers renaming out of order, an S3 multipart upload dated by its start), so
the files at or before the position are checked by name and size against the ingest's records.

Asked in Python, without a JVM: by the Airflow operator before it starts spark-submit (an idle tick
is skipped in milliseconds) and by the `ingest` job itself, under its batch's fence.

Each ingest commit records the files it took (names and sizes) and the source's state after it: the
newest position ingested, and how many files at or before it were ingested, with their digest. A
listing whose files at or before that position match the count and digest holds no late file, and the
work is the files after it (one listing, one commit read). Otherwise (a file landed with an older time,
or an ingested one was deleted or rewritten) the ingest's earlier commits are read back, active and
archived, until every such file is accounted for: the ones no commit took are the late files. When
fewer ingested files than recorded are left at or before the position (deleted, or rewritten with a
newer time), the whole record is read, so that a file after the position that an earlier commit took
is known for a rewrite. A rewritten file (another size, or a newer time) is reported, never read again.
"""

from __future__ import annotations

import hashlib
import itertools
import os
from collections.abc import Iterable
from dataclasses import dataclass

from hudi_ops.errors import InvalidInputError, TableNotFoundError
from hudi_ops.format.meta_client import MetaClient
from hudi_ops.job_specs.writes import SOURCE_FORMATS
from hudi_ops.read.pipeline_metadata import IngestCheckpoint, ingest_checkpoints
from hudi_ops.s3_settings import S3Settings
from hudi_ops.storage import FileInfo, Storage

_DIGEST_BITS = 128


def source_files(source: Storage, folder: str, fmt: str) -> list[FileInfo]:
    """Data files below `folder` of the source, oldest first; hidden and `_` files (such as _SUCCESS) skipped."""
    suffixes = SOURCE_FORMATS[fmt]
    files = [
        f for f in source.walk_files(folder)
        if f.name.endswith(suffixes) and not any(part.startswith((".", "_")) for part in f.path.split("/"))
    ]
    return sorted(files, key=position)


def position(f: FileInfo) -> str:
    return f"{f.mtime_ms:015d}:{f.path}"


def files_digest(files: Iterable[tuple[str, int]]) -> str:
    """An order-free digest of (path, size) pairs: a sum of their hashes, so a set's digest grows by
    adding a member's hash, and a file added, removed or resized changes it."""
    total = 0
    for path, size in files:
        total += int.from_bytes(hashlib.sha256(f"{path}\0{size}".encode()).digest()[: _DIGEST_BITS // 8], "big")
    return f"{total % (1 << _DIGEST_BITS):032x}"


@dataclass(frozen=True)
class IngestBatch:
    """One commit's worth of files, and the checkpoint it commits with (its instant still unknown)."""

    files: tuple[FileInfo, ...]
    checkpoint: IngestCheckpoint


@dataclass(frozen=True)
class IngestWork:
    source: str  # the source folder, as `Storage.table_id` names it whatever the URI's spelling
    checkpoint: IngestCheckpoint | None  # the latest of the source; None before its first ingest
    files: tuple[FileInfo, ...]  # not ingested yet, oldest position first
    late: tuple[FileInfo, ...] = ()  # those of `files` at or before the checkpoint's position
    changed: tuple[FileInfo, ...] = ()  # ingested files rewritten since (another size or time): not read again
    known: tuple[FileInfo, ...] = ()  # listed files at or before the position that were ingested

    @property
    def position(self) -> str | None:
        return self.checkpoint.position if self.checkpoint else None

    def batches(self, run: str = "", *, max_files: int = 0, max_bytes: int = 0) -> list[IngestBatch]:
        """The files in commits of at most `max_files` files and `max_bytes` bytes (0: no bound; a
        file larger than the bound is a batch of its own), oldest first, each with its checkpoint."""
        batches, current, size = [], [], 0
        for f in self.files:
            if current and ((max_files and len(current) >= max_files) or (max_bytes and size + f.size > max_bytes)):
                batches.append(tuple(current))
                current, size = [], 0
            current.append(f)
            size += f.size
        if current:
            batches.append(tuple(current))
        # a rewritten file counts as ingested where it now sits (the position passes it): reported once,
        # by the next commit
        out, taken = [], []
        watermark = max([self.position or "", *(position(f) for f in self.changed)])
        for files in batches:
            taken += files
            watermark = max(watermark, *(position(f) for f in files))
            known = [*self.known, *self.changed, *taken]
            checkpoint = IngestCheckpoint("", self.source, watermark, run, {f.path: f.size for f in files},
                                          len(known), files_digest((f.path, f.size) for f in known))
            out.append(IngestBatch(files, checkpoint))
        return out

    def warnings(self) -> tuple[str, ...]:
        return tuple(f"source file {f.path} was rewritten after it was ingested (now {f.size} bytes, modified at "
                     f"{f.mtime_ms} ms); it is not read again: land changed data under a new name"
                     for f in self.changed)

    def describe(self) -> str:
        since = f"since checkpoint {self.position}" if self.checkpoint else "(the table has no ingest yet)"
        late = f", {len(self.late)} of them landed late (older than the checkpoint)" if self.late else ""
        return f"{len(self.files)} new source file(s) {since}{late}"


def ingest_work(base_path: str | os.PathLike[str], source: Storage, fmt: str, *,
                s3: S3Settings | None = None) -> IngestWork:
    """The source files the table's ingest of `source` has not taken; `s3`: how to reach a table on S3."""
    if not source.is_dir(""):  # a mistyped folder would otherwise skip every tick, silently
        raise InvalidInputError(f"the source folder {source.uri} does not exist; fix the ingest's source path")
    listing = source_files(source, "", fmt)
    try:
        checkpoints = ingest_checkpoints(MetaClient.open(base_path, s3=s3), source.table_id)
        latest = next(checkpoints, None)
    except TableNotFoundError:
        latest = None
    if latest is None:
        return IngestWork(source.table_id, None, tuple(listing))
    before = [f for f in listing if position(f) <= latest.position]
    after = [f for f in listing if position(f) > latest.position]
    if (latest.ingested, latest.digest) == (len(before), files_digest((f.path, f.size) for f in before)):
        return IngestWork(source.table_id, latest, tuple(after), known=tuple(before))
    late, changed = _account_for(before, after, itertools.chain([latest], checkpoints), latest.ingested or 0)
    known = tuple(f for f in before if f not in late and f not in changed)
    new = [f for f in after if f not in changed]
    return IngestWork(source.table_id, latest, tuple(sorted([*late, *new], key=position)), tuple(late),
                      tuple(changed), known)


def _account_for(before: list[FileInfo], after: list[FileInfo], checkpoints: Iterable[IngestCheckpoint],
                 ingested: int) -> tuple[list[FileInfo], list[FileInfo]]:
    """(the files at or before the position that no commit took, the files commits took that were
    rewritten since), reading back only as far as needed: until every file before the position is
    found, and to the first commit when fewer than the `ingested` files recorded are left there."""
    open_files = {f.path: f for f in before}
    later = {f.path: f for f in after}
    changed, found = [], 0
    for checkpoint in checkpoints:
        if not open_files and found >= ingested:
            break
        if checkpoint.files is None:  # from before names were kept: everything up to its position was taken
            for path, f in list(open_files.items()):
                if position(f) <= checkpoint.position:
                    del open_files[path]
            break
        for path, size in checkpoint.files.items():
            if (f := open_files.pop(path, None)) is not None:
                found += 1
                if f.size != size:
                    changed.append(f)
            elif (f := later.pop(path, None)) is not None:  # rewritten with a newer time
                changed.append(f)
    return sorted(open_files.values(), key=position), changed
