"""Hudi's five record meta fields: the first columns of every base file and log record."""

from __future__ import annotations

import pyarrow as pa

COMMIT_TIME = "_hoodie_commit_time"
COMMIT_SEQNO = "_hoodie_commit_seqno"
RECORD_KEY = "_hoodie_record_key"
PARTITION_PATH = "_hoodie_partition_path"
FILE_NAME = "_hoodie_file_name"

META_FIELDS: tuple[str, ...] = (COMMIT_TIME, COMMIT_SEQNO, RECORD_KEY, PARTITION_PATH, FILE_NAME)
META_ARROW_FIELDS: tuple[pa.Field, ...] = tuple(pa.field(n, pa.string()) for n in META_FIELDS)


def data_schema(schema: pa.Schema) -> pa.Schema:
    """The user's columns: `schema` without the meta fields."""
    return pa.schema([f for f in schema if f.name not in META_FIELDS], metadata=schema.metadata)


def with_meta_schema(data: pa.Schema) -> pa.Schema:
    """The meta fields followed by the user's columns."""
    return pa.schema([*META_ARROW_FIELDS, *data_schema(data)])
