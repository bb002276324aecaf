"""The blocks of a Hudi log file, framed as Hudi's `HoodieLogFormatWriter` writes them and
`HoodieLogFileReader` reads them: `#HUDI#`, the block's length, the log format version, the block type, a
header map, the content, a footer map and the block's total length.

Only the framing and the header are read here; what a block's content holds is its reader's concern
(the metadata table's records: `metadata_table.py`).
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from dataclasses import dataclass
from enum import IntEnum

from hudi_ops.errors import InvalidTableError

MAGIC = b"#HUDI#"


class BlockType(IntEnum):
    COMMAND = 0
    DELETE = 1
    CORRUPT = 2
    AVRO_DATA = 3
    HFILE_DATA = 4
    PARQUET_DATA = 5
    CDC_DATA = 6


class Header(IntEnum):
    INSTANT_TIME = 0
    TARGET_INSTANT_TIME = 1
    SCHEMA = 2
    COMMAND_BLOCK_TYPE = 3
    COMPACTED_BLOCK_TIMES = 4


@dataclass(frozen=True)
class LogBlock:
    type: BlockType
    header: dict[int, str]
    content: bytes

    @property
    def instant_time(self) -> str:
        return self.header.get(Header.INSTANT_TIME, "")


def log_blocks(data: bytes, name: str) -> Iterator[LogBlock]:
    """The blocks of a log file's bytes, in order. A block cut short (a writer killed while appending)
    ends the file: InvalidTableError when something follows it."""
    pos = 0
    while pos < len(data):
        if data[pos:pos + len(MAGIC)] != MAGIC:
            raise InvalidTableError(f"{name}: no log block starts at byte {pos}")
        if pos + 14 > len(data):
            return
        length, = struct.unpack_from(">q", data, pos + 6)
        end = pos + 14 + length  # the length counts the block's last 8 bytes: its total, for readers going back
        if end > len(data):
            return  # the last block was cut short: its write never completed
        yield _block(data[pos + 14:end - 8], name, pos)
        pos = end


def _block(body: bytes, name: str, at: int) -> LogBlock:
    try:
        _version, kind = struct.unpack_from(">ii", body, 0)
        header, pos = _map(body, 8)
        content_length, = struct.unpack_from(">q", body, pos)
        content = body[pos + 8:pos + 8 + content_length]
        block_type = BlockType(kind)
    except (struct.error, ValueError, UnicodeDecodeError) as e:
        raise InvalidTableError(f"{name}: the log block at byte {at} is malformed: {e}") from None
    return LogBlock(block_type, header, content)


def _map(body: bytes, pos: int) -> tuple[dict[int, str], int]:
    count, = struct.unpack_from(">i", body, pos)
    pos += 4
    out = {}
    for _ in range(count):
        key, length = struct.unpack_from(">ii", body, pos)
        out[key] = body[pos + 8:pos + 8 + length].decode()
        pos += 8 + length
    return out, pos
