"""A pipeline's source folder: its data files in arrival order, and a file's position in that order.

A position, `<mtime ms, 15 digits>:<path>`, sorts as the files arrived, so an ingest checkpoint is the
position of the newest file ingested and the files after it are the work left.
"""

from __future__ import annotations

from hudi_ops.storage import FileInfo, Storage

SOURCE_FORMATS = {"parquet": (".parquet",), "json": (".json", ".jsonl"), "csv": (".csv",)}


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
