"""A pipeline's source folder: its data files in arrival order, a file's position in that order, and
a digest that tells whether a set of files is still the one an ingest left behind.

A position, `<mtime ms, 15 digits>:<path>`, sorts as the files arrived, so an ingest checkpoint's
position is the newest file ingested. Modification times do not always arrive in order (a file copied
with its old time, two producers renaming out of order, an S3 multipart upload dated by its start), so
the files at or before the position are checked by name and size against the ingest's records.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable

from hudi_ops.storage import FileInfo, Storage

SOURCE_FORMATS = {"parquet": (".parquet",), "json": (".json", ".jsonl"), "csv": (".csv",)}
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
