"""Is there work for an ingest? The source files that arrived after the table's ingest checkpoint.

Asked in Python, without a JVM: by the Airflow operator before it starts spark-submit (an idle tick
is skipped in milliseconds) and by the `ingest` job itself, for runs outside Airflow.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from hudi_ops.errors import InvalidInputError, TableNotFoundError
from hudi_ops.format.meta_client import MetaClient
from hudi_ops.read.pipeline_metadata import ingest_checkpoint, ingest_position
from hudi_ops.s3_settings import S3Settings
from hudi_ops.sources import position, source_files
from hudi_ops.storage import FileInfo, Storage


@dataclass(frozen=True)
class IngestWork:
    source: str  # the source folder, as `Storage.table_id` names it whatever the URI's spelling
    checkpoint: str | None  # the position the table's ingest of the source reached; None before the first
    files: tuple[FileInfo, ...]  # the source files after it, oldest first

    def next_checkpoint(self) -> str:
        """The checkpoint to commit with these files (extra metadata value)."""
        return ingest_checkpoint(self.source, position(self.files[-1]))

    def describe(self) -> str:
        since = f"since checkpoint {self.checkpoint}" if self.checkpoint else "(the table has no ingest yet)"
        return f"{len(self.files)} new source file(s) {since}"


def ingest_work(base_path: str | os.PathLike[str], source: Storage, fmt: str, *,
                s3: S3Settings | None = None) -> IngestWork:
    """The source files past the table's ingest checkpoint; `s3`: how to reach a table on S3."""
    if not source.is_dir(""):  # a mistyped folder would otherwise skip every tick, silently
        raise InvalidInputError(f"the source folder {source.uri} does not exist; fix the ingest's source path")
    try:
        checkpoint = ingest_position(MetaClient.open(base_path, s3=s3), source.table_id)
    except TableNotFoundError:
        checkpoint = None
    files = [f for f in source_files(source, "", fmt) if checkpoint is None or position(f) > checkpoint]
    return IngestWork(source.table_id, checkpoint, tuple(files))
