"""Hudi's metadata table (`.hoodie/metadata`, Java's HoodieBackedTableMetadata): its `files` partition,
which records at every commit the data table's partitions and their files. Reading it costs two LISTs
(the metadata table's timeline and its `files/` folder) however many partitions the table has, where
listing the table costs one per partition: what makes the control plane cheap on object storage.

The metadata table is a MERGE_ON_READ table keyed by partition path: a record `__all_partitions__`
(type 1) maps each partition to `isDeleted`, and one record per partition (type 2) maps each file name
to its size and `isDeleted`. Its file groups' latest base file (an HFile) holds a snapshot as of a
compaction; each later log block (an HFile data block) holds the changes of one data-table
instant. A record's versions merge as HoodieMetadataPayload merges them: a deleted name goes, any
other is added with the larger size (a log file grows).

Which versions count (Java's rules, HoodieTableMetadataUtil.getValidInstantTimestamps and its log
reader): the latest slice of each file group, sliced on the metadata table's own timeline (a base file
of a completed compaction, the logs of completed deltacommits after it); of its log blocks, those whose
instant is not pending on the data table (the metadata table commits first) and that no later rollback
command block undid. Anything this reader does not know (a delete block with records, log compaction,
a block it cannot parse) raises InvalidTableError, and the caller lists the storage instead.
"""

from __future__ import annotations

import io
import json
import struct
from collections.abc import Iterator
from functools import lru_cache
from typing import Any

import fastavro
from fastavro.schema import SchemaParseException

from hudi_ops.errors import InvalidTableError
from hudi_ops.format.archived_timeline import archived_completion_times
from hudi_ops.format.file_group import FileSlice
from hudi_ops.format.fs_view import data_files, file_groups
from hudi_ops.format.hfile import HFile
from hudi_ops.format.log_blocks import BlockType, Header, LogBlock, log_blocks
from hudi_ops.format.table_properties import TableProperties
from hudi_ops.format.timeline import META_FOLDER, Timeline
from hudi_ops.storage import Storage

METADATA_FOLDER = f"{META_FOLDER}/metadata"
MDT_TIMELINE = f"{META_FOLDER}/timeline"
MDT_HISTORY = f"{MDT_TIMELINE}/history"
FILES = "files"
ALL_PARTITIONS = "__all_partitions__"
#: the key of a non-partitioned table's only partition
ROOT_PARTITION = "."
_PARTITION_LIST, _FILE_LIST = 1, 2
#: an empty HoodieDeleteRecordList: Hudi writes one when it creates a file group's first log file
_NO_DELETES = b"\x00"

#: partition path ("" for the root) -> file name -> size in bytes
PartitionFiles = dict[str, dict[str, int]]
#: a files record's version: file (or partition) name -> (size, deleted)
Changes = dict[str, tuple[int, bool]]


def files_partition(storage: Storage, properties: TableProperties, timeline: Timeline) -> PartitionFiles | None:
    """The data table's partitions and files as of `timeline`, from its metadata table; None when the
    table has no complete `files` partition (the metadata table off, or being built), or is of table
    version 6, whose metadata table (suffixed instants, logs named after their slice) this reader does
    not take on: Hudi's tests left no such table to check it against."""
    if FILES not in properties.metadata_partitions or properties.table_version < 8:
        return None
    mdt = storage.child(METADATA_FOLDER)
    # Hudi makes the metadata table with the default timeline folder, whatever the data table's
    mdt_timeline = Timeline.load(mdt, MDT_TIMELINE, layout_version=2)
    bases, logs = data_files((FILES, f.name, f.size) for f in mdt.list_files(FILES))
    groups = file_groups(mdt_timeline, bases, logs, _ArchivedCompletion(mdt))
    if not groups:
        raise InvalidTableError(f"{mdt.uri_of(FILES)} holds no file group although hoodie.properties lists "
                                "the metadata table's files partition")
    pending = {i.requested_time for i in timeline.pending}
    records: dict[str, dict[str, int]] = {}  # key -> name -> size
    try:
        for group in groups:
            for key, changes in _slice_records(mdt, group.slices[0], pending):
                records[key] = _merge(records.get(key, {}), changes)
    except (struct.error, KeyError, ValueError, EOFError, IndexError, TypeError, SchemaParseException) as e:
        raise InvalidTableError(f"{mdt.uri_of(FILES)} holds a record this reader cannot parse: {e!r}") from e
    if ALL_PARTITIONS not in records:
        raise InvalidTableError(f"{mdt.uri_of(FILES)} has no {ALL_PARTITIONS} record")
    return {("" if p == ROOT_PARTITION else p): records.get(p, {}) for p in records[ALL_PARTITIONS]}


class _ArchivedCompletion:
    """The metadata table's archived instants' completion times, read once when a log file still there
    belongs to an archived deltacommit (its cleaner runs behind its archiver). One not found is not
    guessed at: whether its records come before or after the latest compaction's depends on it."""

    def __init__(self, mdt: Storage) -> None:
        self.mdt: Storage = mdt
        self.times: dict[str, str | None] | None = None

    def __call__(self, instant: str) -> str:
        if self.times is None:
            self.times = archived_completion_times(self.mdt, MDT_HISTORY)
        found = self.times.get(instant)
        if found is None:
            raise InvalidTableError(f"{self.mdt.uri_of(FILES)} holds a log of deltacommit {instant}, which is on "
                                    "neither of the metadata table's timelines")
        return found


def _slice_records(mdt: Storage, latest: FileSlice, pending: set[str]) -> Iterator[tuple[str, Changes]]:
    """(key, changes) of a file group's latest slice: its base file's records, then those of each log
    block that counts, in the order Hudi's log reader takes them."""
    if latest.base_file is not None:
        hfile = HFile(mdt.read_bytes(latest.base_file.path), mdt.uri_of(latest.base_file.path))
        schema = _schema(hfile.file_info[b"schema"].decode())
        for key, value in hfile.items():
            yield key.decode(), _changes(value, schema)
    blocks: list[LogBlock] = []
    for log in latest.log_files:  # in Hudi's order
        for block in log_blocks(mdt.read_bytes(log.path), mdt.uri_of(log.path)):
            if block.type == BlockType.COMMAND:  # a rollback undoes the blocks of its target read so far
                target = block.header.get(Header.TARGET_INSTANT_TIME)
                blocks = [b for b in blocks if b.instant_time != target]
            elif block.instant_time not in pending:  # pending: the data table has not committed it (yet)
                blocks.append(block)
    for block in blocks:
        if Header.COMPACTED_BLOCK_TIMES in block.header:
            raise InvalidTableError(f"{mdt.uri_of(FILES)} holds a log-compacted block, which hudi-ops does not read")
        yield from _block_records(block, mdt)


def _block_records(block: LogBlock, mdt: Storage) -> Iterator[tuple[str, Changes]]:
    if block.type == BlockType.HFILE_DATA:
        schema = _schema(block.header[Header.SCHEMA])
        for key, value in HFile(block.content, mdt.uri_of(FILES)).items():
            yield key.decode(), _changes(value, schema)
    elif block.type == BlockType.DELETE:
        if block.content[8:] != _NO_DELETES:  # content version, payload length, payload
            raise InvalidTableError(f"{mdt.uri_of(FILES)} holds a delete block with records, which hudi-ops "
                                    "does not read")
    else:
        raise InvalidTableError(f"{mdt.uri_of(FILES)} holds a {block.type.name} block, which the metadata "
                                "table does not write")


@lru_cache(maxsize=8)
def _schema(text: str) -> Any:
    return fastavro.parse_schema(json.loads(text))


def _changes(value: bytes, schema: Any) -> Changes:
    """A files record's changes: name -> (size, deleted). Its key is the HFile cell's row key (Hudi
    leaves the record's own `key` field empty in base files)."""
    datum = fastavro.schemaless_reader(io.BytesIO(value), schema, None)
    if datum["type"] not in (_PARTITION_LIST, _FILE_LIST):
        raise InvalidTableError(f"a metadata-table files record of type {datum['type']}, not 1 or 2")
    files = datum["filesystemMetadata"] or {}
    return {n: (i["size"], i["isDeleted"]) for n, i in files.items()}


def _merge(files: dict[str, int], changes: Changes) -> dict[str, int]:
    """HoodieMetadataPayload's merge of a files record's versions: a deleted name goes, any other is
    added with the larger of its sizes."""
    merged = dict(files)
    for name, (size, deleted) in changes.items():
        if deleted:
            merged.pop(name, None)
        else:
            merged[name] = max(merged.get(name, 0), size)
    return merged
