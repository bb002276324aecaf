"""HFile (HBase's format, version 3), as Hudi's metadata table stores its records: a reader that
scans every key-value and reads the file info, which is all the control plane asks of the `files`
partition (a record per data-table partition). No index seeks: the files are small and read whole.

Layout (read in Hudi's `hudi-io` HFile reader and checked on the files Hudi and HBase wrote):
blocks from offset 0, each a 33-byte header (8-byte magic, on-disk size without header, uncompressed
size without header, previous block's offset, checksum type, bytes per checksum, on-disk data size
with header), its data (compressed as the trailer says) and, when the checksum type is not NULL, a
4-byte checksum per chunk; then the load-on-open section (root index, meta index, file info); last, a
4,096-byte trailer: `TRABLK"$`, a length-delimited protobuf, and the version in its last 4 bytes.
A data block holds key-values: key length, value length (big-endian ints), the key (row length as a
short, the row, a family length byte, the qualifier, an 8-byte timestamp, a type byte), the value,
and a one-byte MVCC version (Hudi writes 0).
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Iterator
from dataclasses import dataclass

from hudi_ops.errors import InvalidTableError

TRAILER_SIZE = 4096
HEADER_SIZE = 33
_TRAILER_MAGIC = b'TRABLK"$'
_DATA_MAGIC = b"DATABLK*"
#: what a multi-level index and a bloom filter put between data blocks: leaf and intermediate index
#: blocks, bloom chunks (an encoded data block, `DATABLKE`, would hide cells, so it is refused)
_BETWEEN_DATA = (b"IDXLEAF2", b"IDXINTE2", b"BLMFBLK2")
_FILE_INFO_MAGIC = b"FILEINF2"
_PBUF_MAGIC = b"PBUF"
_NULL_CHECKSUM = 0
#: HBase's Compression.Algorithm ordinals
_GZ, _NONE = 1, 2
#: key bytes besides the row: row length (2), family length (1), timestamp (8), type (1)
_KEY_OVERHEAD = 12


@dataclass(frozen=True)
class Trailer:
    file_info_offset: int
    entry_count: int
    first_data_block_offset: int
    last_data_block_offset: int
    compression: int
    major_version: int


class HFile:
    """`HFile(data, name)`: the file's bytes; `items()` its key-values in order, `file_info` its map."""

    def __init__(self, data: bytes, name: str = "HFile") -> None:
        self.data, self.name = data, name
        if len(data) < TRAILER_SIZE or data[-TRAILER_SIZE:][:8] != _TRAILER_MAGIC:
            raise InvalidTableError(f"{name} is not an HFile: no trailer at its end")
        self.trailer = _trailer(data[-TRAILER_SIZE:], name)
        if self.trailer.major_version != 3:
            raise InvalidTableError(f"{name} is HFile version {self.trailer.major_version}; only 3 is read")
        if self.trailer.compression not in (_GZ, _NONE):
            raise InvalidTableError(f"{name} uses HBase compression #{self.trailer.compression}; only GZ and "
                                    "NONE are read (Hudi's default for the metadata table is GZ)")

    def items(self) -> Iterator[tuple[bytes, bytes]]:
        """(row key, value) of every cell, in key order."""
        if self.trailer.entry_count == 0:
            return
        offset = self.trailer.first_data_block_offset
        while offset <= self.trailer.last_data_block_offset:
            at = offset
            magic, content, offset = self._block(offset)
            if magic == _DATA_MAGIC:
                yield from _cells(content, self.name)
            elif magic not in _BETWEEN_DATA:
                raise InvalidTableError(f"{self.name}: a {magic!r} block at offset {at}, which hudi-ops does not read")

    @property
    def file_info(self) -> dict[bytes, bytes]:
        magic, content, _ = self._block(self.trailer.file_info_offset)
        if magic != _FILE_INFO_MAGIC or not content.startswith(_PBUF_MAGIC):
            raise InvalidTableError(f"{self.name}: no file info block at offset {self.trailer.file_info_offset}")
        message, _ = _delimited(content, len(_PBUF_MAGIC), self.name)
        out = {}
        for number, entry in _fields(message, self.name):
            if number == 1:  # BytesBytesPair map_entry
                pair = dict(_fields(entry, self.name))
                out[pair.get(1, b"")] = pair.get(2, b"")
        return out

    def _block(self, offset: int) -> tuple[bytes, bytes, int]:
        """(magic, uncompressed content, next block's offset) of the block at `offset`."""
        header = self.data[offset:offset + HEADER_SIZE]
        if len(header) < HEADER_SIZE:
            raise InvalidTableError(f"{self.name} ends inside the block header at offset {offset}")
        magic = header[:8]
        on_disk, uncompressed = struct.unpack_from(">ii", header, 8)
        checksum_type, = struct.unpack_from(">b", header, 24)
        data_with_header, = struct.unpack_from(">i", header, 29)
        if not 0 <= on_disk <= len(self.data) - offset - HEADER_SIZE or uncompressed < 0:
            raise InvalidTableError(f"{self.name}: the block at offset {offset} says it holds {on_disk} bytes "
                                    f"({uncompressed} uncompressed), which the file cannot hold")
        stored = data_with_header - HEADER_SIZE if checksum_type != _NULL_CHECKSUM else on_disk
        raw = self.data[offset + HEADER_SIZE:offset + HEADER_SIZE + stored]
        if self.trailer.compression == _GZ:
            try:
                content = zlib.decompress(raw, wbits=31)  # a gzip stream, as Hadoop's GzipCodec writes
            except zlib.error as e:
                raise InvalidTableError(f"{self.name}: block at offset {offset} does not decompress: {e}") from e
        else:
            content = raw
        if len(content) != uncompressed:
            raise InvalidTableError(f"{self.name}: block at offset {offset} holds {len(content)} bytes, its "
                                    f"header says {uncompressed}")
        return magic, content, offset + HEADER_SIZE + on_disk


def _cells(block: bytes, name: str) -> Iterator[tuple[bytes, bytes]]:
    pos, end = 0, len(block)
    while pos < end:
        key_length, value_length = struct.unpack_from(">ii", block, pos)
        key = block[pos + 8:pos + 8 + key_length]
        row_length, = struct.unpack_from(">h", key, 0)
        if row_length + _KEY_OVERHEAD > key_length:
            raise InvalidTableError(f"{name}: a cell's key is shorter than its row")
        value_at = pos + 8 + key_length
        yield key[2:2 + row_length], block[value_at:value_at + value_length]
        pos = value_at + value_length + 1  # the MVCC version, a one-byte vlong (0)


def _trailer(data: bytes, name: str) -> Trailer:
    message, _ = _delimited(data, len(_TRAILER_MAGIC), name)
    fields = dict(_fields(message, name))
    version, = struct.unpack_from(">i", data, len(data) - 4)
    return Trailer(file_info_offset=fields.get(1, 0),
                   entry_count=fields.get(7, 0), first_data_block_offset=fields.get(9, 0),
                   last_data_block_offset=fields.get(10, 0), compression=fields.get(12, _NONE),
                   major_version=version & 0x00FFFFFF)


# -- protobuf, the little of it HFile uses ---------------------------------------------------------

def _varint(data: bytes, pos: int, name: str) -> tuple[int, int]:
    value = shift = 0
    while True:
        if pos >= len(data):
            raise InvalidTableError(f"{name}: a protobuf varint runs past its end")
        byte = data[pos]
        value |= (byte & 0x7F) << shift
        pos, shift = pos + 1, shift + 7
        if not byte & 0x80:
            return value, pos


def _delimited(data: bytes, pos: int, name: str) -> tuple[bytes, int]:
    length, pos = _varint(data, pos, name)
    return data[pos:pos + length], pos + length


def _fields(message: bytes, name: str) -> Iterator[tuple[int, int | bytes]]:
    """(field number, value) of a protobuf message: varints as ints, length-delimited as bytes."""
    pos = 0
    while pos < len(message):
        tag, pos = _varint(message, pos, name)
        number, wire = tag >> 3, tag & 7
        if wire == 0:
            value, pos = _varint(message, pos, name)
            yield number, value
        elif wire == 2:
            chunk, pos = _delimited(message, pos, name)
            yield number, chunk
        elif wire in (1, 5):  # fixed64, fixed32: HFile's messages have none; skip them
            pos += 8 if wire == 1 else 4
        else:
            raise InvalidTableError(f"{name}: protobuf wire type {wire} is not one HFile uses")
