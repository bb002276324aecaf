"""The table's storage: a base path on a pyarrow file system, addressed by table-relative paths.

Hudi's Spark writer writes the tables; hudi-ops' control plane only lists and reads their files (and
the jobs' source folders) through `Storage`, so a table can live on a local folder, HDFS or an object
store without the format code knowing which.
"""

from __future__ import annotations

import os
import posixpath
from dataclasses import dataclass

import pyarrow.fs as pafs

from hudi_ops.errors import StorageError
from hudi_ops.s3_settings import S3Settings

S3_SCHEMES = ("s3", "s3a", "s3n")


@dataclass(frozen=True, slots=True)
class FileInfo:
    """One listed file: its path relative to the table's base path, size and modification time."""

    path: str
    size: int
    mtime_ms: int

    @property
    def name(self) -> str:
        return posixpath.basename(self.path)


class Storage:
    """A Hudi table's base path on a pyarrow file system; all paths given to it are relative."""

    def __init__(self, fs: pafs.FileSystem, root: str, uri: str) -> None:
        self.fs = fs
        self.root = root.rstrip("/") or "/"
        self.uri = uri

    @classmethod
    def for_uri(cls, uri: str | os.PathLike[str], *, s3: S3Settings | None = None) -> Storage:
        """`s3`: how to reach an `s3://` or `s3a://` URI's store (None: pyarrow's AWS chain, from the
        environment)."""
        text = os.fspath(uri)
        if "://" not in text:
            text = os.path.abspath(text)
            return cls(pafs.LocalFileSystem(), text, text)
        # Hadoop's s3a:// (what Hudi and Spark are given) is plain S3 to Arrow; the URI is kept for them
        scheme, rest = text.split("://", 1)
        if scheme in S3_SCHEMES and s3 is not None:
            return cls(s3.filesystem(), rest, text)
        fs, root = pafs.FileSystem.from_uri(f"s3://{rest}" if scheme in S3_SCHEMES else text)
        return cls(fs, root, text)

    def child(self, rel: str) -> Storage:
        """The folder `rel` as a storage of its own (a table's metadata table, say)."""
        return Storage(self.fs, self.full_path(rel), self.uri_of(rel))

    @property
    def table_id(self) -> str:
        """Names the table's location independently of how its URI was spelled (`/t` vs `file:///t`)."""
        return f"{self.fs.type_name}:{self.root}"

    @property
    def is_local(self) -> bool:
        return isinstance(self.fs, pafs.LocalFileSystem)

    def full_path(self, rel: str) -> str:
        return posixpath.join(self.root, rel) if rel else self.root

    def uri_of(self, rel: str) -> str:
        """The path as other engines name it: absolute for local tables, scheme-qualified otherwise."""
        if self.is_local:
            return self.full_path(rel)
        return posixpath.join(self.uri.rstrip("/"), rel) if rel else self.uri

    def is_dir(self, rel: str) -> bool:
        return self.fs.get_file_info(self.full_path(rel)).type == pafs.FileType.Directory

    def read_bytes(self, rel: str) -> bytes:
        try:
            with self.fs.open_input_stream(self.full_path(rel)) as f:
                return f.read()
        except FileNotFoundError:
            raise
        except NotADirectoryError as e:  # a folder on the way is a file: no such file either
            raise FileNotFoundError(e.errno, f"no such file: {self.uri_of(rel)}") from e
        except OSError as e:
            raise StorageError(f"cannot read {self.uri_of(rel)}: {e}") from e

    def mtime_ms(self, rel: str) -> int:
        """When the file or folder at `rel` last changed; 0 when there is none."""
        info = self.fs.get_file_info(self.full_path(rel))
        return _mtime_ms(info) if info.type != pafs.FileType.NotFound else 0

    def write_file(self, rel: str, data: bytes) -> None:
        """Create or replace the file whole: a reader sees the old file or the new one, never a part
        (a local file is written beside and renamed; an object store's PUT is whole by itself)."""
        path = self.full_path(rel)
        try:
            self.fs.create_dir(posixpath.dirname(path), recursive=True)
            target = f"{path}.partial" if self.is_local else path
            with self.fs.open_output_stream(target) as f:
                f.write(data)
            if target != path:
                self.fs.move(target, path)
        except OSError as e:
            raise StorageError(f"cannot write {self.uri_of(rel)}: {e}") from e

    def delete_file(self, rel: str) -> None:
        """Remove the file at `rel`, if there is one."""
        try:
            self.fs.delete_file(self.full_path(rel))
        except FileNotFoundError:
            pass
        except OSError as e:
            raise StorageError(f"cannot remove {self.uri_of(rel)}: {e}") from e

    def delete_dir(self, rel: str) -> None:
        """Remove the folder and everything in it (only for what no commit refers to)."""
        try:
            self.fs.delete_dir(self.full_path(rel))
        except OSError as e:
            raise StorageError(f"cannot remove {self.uri_of(rel)}: {e}") from e

    def file_info(self, rel: str) -> FileInfo | None:
        """The file at `rel`, None when there is none."""
        i = self.fs.get_file_info(self.full_path(rel))
        return FileInfo(rel, i.size or 0, _mtime_ms(i)) if i.type == pafs.FileType.File else None

    def list_files(self, rel_dir: str) -> list[FileInfo]:
        """Files (not folders) directly inside `rel_dir`; empty when the folder does not exist."""
        return [f for f, is_dir in self._list(rel_dir) if not is_dir]

    def walk_files(self, rel_dir: str = "", *, skip_dot_folders: bool = False) -> list[FileInfo]:
        """Every file below `rel_dir`, at any depth, in one listing call; with `skip_dot_folders`, one
        per folder of `rel_dir`'s own, leaving out those whose name starts with a dot (a table's
        `.hoodie`, which holds most of its files once the metadata table grows)."""
        if skip_dot_folders:
            out = []
            for info, is_dir in self._list(rel_dir):
                if not is_dir:
                    out.append(info)
                elif not posixpath.basename(info.path).startswith("."):
                    out += self.walk_files(info.path)
            return out
        base = self.full_path(rel_dir).rstrip("/")
        selector = pafs.FileSelector(base, allow_not_found=True, recursive=True)
        out = []
        for i in self.fs.get_file_info(selector):
            if i.type == pafs.FileType.File:
                sub = i.path[len(base) + 1:] if i.path.startswith(base + "/") else posixpath.basename(i.path)
                out.append(FileInfo(posixpath.join(rel_dir, sub) if rel_dir else sub, i.size or 0, _mtime_ms(i)))
        return out

    def _list(self, rel_dir: str) -> list[tuple[FileInfo, bool]]:
        selector = pafs.FileSelector(self.full_path(rel_dir), allow_not_found=True, recursive=False)
        out = []
        for i in self.fs.get_file_info(selector):
            rel = posixpath.join(rel_dir, posixpath.basename(i.path)) if rel_dir else posixpath.basename(i.path)
            out.append((FileInfo(rel, i.size or 0, _mtime_ms(i)), i.type == pafs.FileType.Directory))
        return out


def _mtime_ms(info: pafs.FileInfo) -> int:
    m = info.mtime_ns
    return int(m // 1_000_000) if m is not None else 0
