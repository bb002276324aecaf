"""Parquet base files: writing them with Hudi's footer (bloom filter, key range) and reading them back.

Files are written for Spark and hudi-rs: Parquet format 2.6, timestamps as int64 microseconds (Spark
cannot read nanoseconds), and the footer key/values that Java's BLOOM index reads when tagging records.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from typing import cast

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from hudi_ops.config import WriteConfig
from hudi_ops.errors import InvalidInputError, InvalidTableError, StorageError
from hudi_ops.format.bloom import SIMPLE, BloomFilter
from hudi_ops.format.meta_fields import COMMIT_SEQNO, META_FIELDS, RECORD_KEY
from hudi_ops.storage import Storage

BLOOM_KEY = "org.apache.hudi.bloomfilter"
LEGACY_BLOOM_KEY = "com.uber.hoodie.bloomfilter"
BLOOM_TYPE_CODE_KEY = "hoodie_bloom_filter_type_code"
MIN_RECORD_KEY = "hoodie_min_record_key"
MAX_RECORD_KEY = "hoodie_max_record_key"

_CODECS = {"gzip": "gzip", "snappy": "snappy", "zstd": "zstd", "lz4": "lz4", "uncompressed": "none"}
# zlib's default level, which Hudi's Java writer gets through Hadoop's codec; Arrow's own gzip
# default (9) writes about 3x slower for files about 1% smaller
_LEVELS = {"gzip": 6}
# unique in every file: a dictionary only costs time before the writer falls back to plain encoding
_UNIQUE_COLUMNS = (COMMIT_SEQNO, RECORD_KEY)
_DEFAULT_ROW_GROUP_BYTES = cast(int, WriteConfig.PARQUET_BLOCK_SIZE.default)
_DEFAULT_PAGE_SIZE = cast(int, WriteConfig.PARQUET_PAGE_SIZE.default)


@dataclass(frozen=True, slots=True)
class BaseFileFooter:
    """Hudi's key/values from a base file's Parquet footer, and its row count."""

    bloom_type_code: str | None
    serialized_bloom: str | None
    min_record_key: str | None
    max_record_key: str | None
    num_rows: int

    def bloom_filter(self) -> BloomFilter | None:
        if self.serialized_bloom is None:
            return None
        # Java reads a filter without a type code as SIMPLE: such files predate dynamic filters.
        return BloomFilter.deserialize(self.serialized_bloom, self.bloom_type_code or SIMPLE)


@dataclass(frozen=True, slots=True)
class WrittenFile:
    """What a write stat needs to know about a base file just written."""

    path: str
    num_rows: int
    size_bytes: int
    min_record_key: str | None
    max_record_key: str | None


def read_footer(storage: Storage, rel_path: str) -> BaseFileFooter:
    with _reading(storage, rel_path):
        meta = pq.read_metadata(storage.full_path(rel_path), filesystem=storage.fs)
    kv = meta.metadata or {}

    def value(*keys: str) -> str | None:
        for key in keys:
            raw = kv.get(key.encode())
            if raw is not None:
                try:
                    return raw.decode("utf-8")
                except UnicodeDecodeError:
                    uri = storage.uri_of(rel_path)
                    raise InvalidTableError(f"footer value {key} of {uri} is not UTF-8") from None
        return None

    return BaseFileFooter(
        bloom_type_code=value(BLOOM_TYPE_CODE_KEY),
        serialized_bloom=value(BLOOM_KEY, LEGACY_BLOOM_KEY),
        min_record_key=value(MIN_RECORD_KEY),
        max_record_key=value(MAX_RECORD_KEY),
        num_rows=meta.num_rows,
    )


def write_base_file(
    storage: Storage,
    rel_path: str,
    table: pa.Table,
    *,
    bloom: BloomFilter | None,
    compression: str = "gzip",
    row_group_bytes: int = _DEFAULT_ROW_GROUP_BYTES,
    page_size: int = _DEFAULT_PAGE_SIZE,
) -> WrittenFile:
    """Write `table` (meta columns first, record keys filled) as a base file; `bloom` gets every key."""
    if table.schema.names[: len(META_FIELDS)] != list(META_FIELDS):
        raise InvalidInputError(f"a base file's first columns must be {', '.join(META_FIELDS)}")
    codec = _CODECS.get(compression.lower())
    if codec is None:
        choices = ", ".join(_CODECS)
        raise InvalidInputError(f"compression {compression!r} is not supported; use one of {choices}")
    keys = table.column(RECORD_KEY)
    if keys.null_count:
        raise InvalidInputError(f"{keys.null_count} rows have a null {RECORD_KEY}; fill in the record keys")
    min_key, max_key = _key_range(keys)
    footer: dict[str, str] = {}
    if bloom is not None:
        bloom.add_all(keys)
        footer[BLOOM_KEY] = bloom.serialize()
        footer[BLOOM_TYPE_CODE_KEY] = bloom.type_code
    if min_key is not None and max_key is not None:
        footer[MIN_RECORD_KEY] = min_key
        footer[MAX_RECORD_KEY] = max_key

    # Schema metadata (e.g. pandas') would be copied into ARROW:schema; the footer is added separately
    # below so that the 430 KB bloom filter is not embedded a second time inside ARROW:schema.
    table = table.replace_schema_metadata(None)
    storage.makedirs(posixpath.dirname(rel_path))
    try:
        with storage.fs.open_output_stream(storage.full_path(rel_path)) as out:
            with pq.ParquetWriter(
                out, table.schema, version="2.6", compression=codec, compression_level=_LEVELS.get(codec),
                coerce_timestamps="us", data_page_size=page_size,
                use_dictionary=[c for c in table.column_names if c not in _UNIQUE_COLUMNS],
            ) as writer:
                writer.write_table(table, row_group_size=_rows_per_group(table, row_group_bytes))
                writer.add_key_value_metadata(footer)
            size = out.tell()
    except BaseException as e:
        with suppress(OSError):  # never leave a half-written base file behind
            storage.delete_file(rel_path)
        if isinstance(e, pa.ArrowInvalid | pa.ArrowNotImplementedError | pa.ArrowTypeError):
            # e.g. nanosecond timestamps that microseconds cannot hold, or an unsupported type
            raise InvalidInputError(f"cannot write {storage.uri_of(rel_path)}: {e}") from e
        if isinstance(e, OSError):
            raise StorageError(f"cannot write {storage.uri_of(rel_path)}: {e}") from e
        raise
    return WrittenFile(rel_path, table.num_rows, size, min_key, max_key)


def read_base_file(
    storage: Storage,
    rel_path: str,
    *,
    columns: Sequence[str] | None = None,
    filter: pc.Expression | None = None,
) -> pa.Table:
    with _reading(storage, rel_path):
        # partitioning=None: a hive-style folder such as city=chennai must not become a column.
        return pq.read_table(
            storage.full_path(rel_path), filesystem=storage.fs, columns=columns, filters=filter,
            partitioning=None,
        )


def read_record_keys(storage: Storage, rel_path: str) -> pa.Array:
    return read_base_file(storage, rel_path, columns=[RECORD_KEY]).column(0).combine_chunks()


def _key_range(keys: pa.ChunkedArray) -> tuple[str | None, str | None]:
    """Min and max key in Java String order, which Hudi's range pruning compares with."""
    if len(keys) == 0:
        return None, None
    # UTF-8 byte order equals Java's UTF-16 order unless a key has a character beyond U+FFFF.
    if pc.any(pc.match_substring_regex(keys, r"[\x{10000}-\x{10FFFF}]")).as_py():
        ordered = sorted(keys.to_pylist(), key=lambda k: k.encode("utf-16-be"))
        return ordered[0], ordered[-1]
    bounds = pc.min_max(keys)
    return bounds["min"].as_py(), bounds["max"].as_py()


def _rows_per_group(table: pa.Table, row_group_bytes: int) -> int:
    """Rows per row group so that a group holds about `row_group_bytes` of (in-memory) data."""
    row_bytes = table.nbytes / max(table.num_rows, 1)
    return max(1, int(row_group_bytes / max(row_bytes, 1)))


@contextmanager
def _reading(storage: Storage, rel_path: str) -> Iterator[None]:
    """Map pyarrow's read errors: a missing file stays FileNotFoundError, a corrupt one is invalid."""
    try:
        yield
    except FileNotFoundError:
        raise
    except pa.ArrowInvalid as e:
        raise InvalidTableError(f"{storage.uri_of(rel_path)} is not a readable Parquet base file: {e}") from e
    except OSError as e:
        if "thrift" in str(e).lower():  # pyarrow reports a garbled footer as an OSError
            raise InvalidTableError(f"{storage.uri_of(rel_path)} has a corrupt Parquet footer: {e}") from e
        raise StorageError(f"cannot read {storage.uri_of(rel_path)}: {e}") from e
