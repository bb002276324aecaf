"""Hudi's record-key bloom filters, bit-compatible with the Java ones stored in base file footers.

`DynamicBloomFilter` is `HoodieDynamicBoundedBloomFilter` (type code DYNAMIC_V0, Spark's default) and
`SimpleBloomFilter` is Hudi's class of that name (SIMPLE); both wrap Hadoop's bloom filter and MurmurHash2.
Key i of a filter with `k` hashes sets bits `abs(h_j % vector_size)` where `h_j = murmur(utf8(key), h_{j-1})`,
`h_{-1} = 0`, all in Java int arithmetic. The hashing is vectorised with numpy: keys of one UTF-8 length
go through every round together, because a base file holds 100k+ keys and Hudi uses 30 rounds.
"""

from __future__ import annotations

import base64
import binascii
import math
import struct
from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator, Sequence
from typing import ClassVar

import numpy as np
import pyarrow as pa

from hudi_ops.errors import ConfigError, InvalidInputError, InvalidTableError

DYNAMIC_V0 = "DYNAMIC_V0"
SIMPLE = "SIMPLE"

_VERSION = -1  # Hadoop's InternalFilter format version
_MURMUR = 1  # Hadoop's Hash.MURMUR_HASH; the only hash type Hudi writes
_HEADER = struct.Struct(">iibi")  # version, nbHash, hashType, vectorSize (Java DataOutput, big-endian)
_DYNAMIC_STATE = struct.Struct(">iii")  # nr, currentNbRecord, number of rows
_M = np.uint32(0x5BD1E995)
_BATCH = 1 << 15  # keys hashed at once; bounds the (keys x hashes) position array

Keys = Iterable[str] | pa.Array | pa.ChunkedArray


# -- hashing -----------------------------------------------------------------------------------------


def hash_positions(keys: Keys, num_hashes: int, vector_size: int) -> np.ndarray:
    """Bit positions, shape (len(keys), num_hashes), that Hudi's filters set or test for each key."""
    data, offsets = _utf8(keys)
    lengths = np.diff(offsets)
    out = np.empty((len(lengths), num_hashes), dtype=np.int64)
    for length in np.unique(lengths):
        idx = np.flatnonzero(lengths == length)
        out[idx] = _murmur_positions(data, offsets[idx], int(length), num_hashes, vector_size)
    return out


def _as_arrow(keys: Keys) -> pa.Array | pa.ChunkedArray:
    if isinstance(keys, pa.Array | pa.ChunkedArray):
        return keys
    try:
        return pa.array(keys if isinstance(keys, Sequence) else list(keys), type=pa.string())
    except (pa.ArrowInvalid, pa.ArrowTypeError) as e:
        raise InvalidInputError(f"record keys must be strings: {e}") from None


def _utf8(keys: Keys) -> tuple[np.ndarray, np.ndarray]:
    """The keys' UTF-8 bytes back to back, and the n+1 offsets delimiting them (Arrow does the encoding)."""
    keys = _as_arrow(keys)
    if isinstance(keys, pa.ChunkedArray):
        keys = keys.combine_chunks()
    if not (pa.types.is_string(keys.type) or pa.types.is_large_string(keys.type)
            or pa.types.is_string_view(keys.type)):
        raise InvalidInputError(f"record keys must be strings, not {keys.type}")
    if keys.null_count:
        raise InvalidInputError(f"{keys.null_count} record keys are null; every record needs a key")
    keys = keys.cast(pa.large_string())
    _, offsets_buf, data_buf = keys.buffers()
    offsets = np.frombuffer(offsets_buf, dtype=np.int64)[keys.offset : keys.offset + len(keys) + 1]
    data = np.frombuffer(data_buf, dtype=np.uint8) if data_buf is not None else np.empty(0, np.uint8)
    return data, offsets


def _murmur_positions(data: np.ndarray, starts: np.ndarray, length: int, num_hashes: int,
                      vector_size: int) -> np.ndarray:
    """Hadoop MurmurHash2 rounds for keys that all have `length` bytes, starting at `starts` in `data`."""
    n_words, left = divmod(length, 4)
    # The mixed 4-byte words and the tail do not depend on the seed: compute them once for all rounds.
    words = np.empty((n_words, len(starts)), dtype=np.uint32)
    for w in range(n_words):
        chunk = data[starts[:, None] + np.arange(4 * w, 4 * w + 4)]
        k = chunk.view("<u4").ravel().astype(np.uint32)
        k *= _M
        k ^= k >> np.uint32(24)
        k *= _M
        words[w] = k
    tail = None
    if left:
        # Java bytes are signed: tail bytes are sign-extended before the shift and xor (Hadoop reads
        # them from the end of the key, so left == 3 takes bytes length-3, length-2, length-1).
        def signed(back: int) -> np.ndarray:
            return data[starts + (length - back)].view(np.int8).astype(np.int32)

        t = signed(1)
        if left >= 2:
            t ^= signed(2) << 8
        if left >= 3:
            t ^= signed(3) << 16
        tail = t.view(np.uint32)

    out = np.empty((len(starts), num_hashes), dtype=np.int64)
    h = np.zeros(len(starts), dtype=np.uint32)  # the seed chains: round j starts from round j-1's hash
    for j in range(num_hashes):
        h ^= np.uint32(length)
        for w in range(n_words):
            h *= _M
            h ^= words[w]
        if tail is not None:
            h ^= tail
            h *= _M
        h ^= h >> np.uint32(13)
        h *= _M
        h ^= h >> np.uint32(15)
        # Java: Math.abs(h % vectorSize), with % truncating toward zero; equal to |h| mod vectorSize.
        out[:, j] = np.abs(h.view(np.int32).astype(np.int64)) % vector_size
    return out


def _batches(keys: Keys) -> Iterator[pa.Array | pa.ChunkedArray]:
    keys = _as_arrow(keys)
    for start in range(0, len(keys), _BATCH):
        yield keys.slice(start, _BATCH)


# -- bit rows -----------------------------------------------------------------------------------------


class _BitRow:
    """One Hadoop InternalBloomFilter: a bit vector written as header + bytes, bits little-endian."""

    def __init__(self, vector_size: int, num_hashes: int, bits: np.ndarray | None = None) -> None:
        self.vector_size = vector_size
        self.num_hashes = num_hashes
        self.bits = np.zeros(vector_size, dtype=bool) if bits is None else bits

    def set(self, positions: np.ndarray) -> None:
        self.bits[positions.ravel()] = True

    def test(self, positions: np.ndarray) -> np.ndarray:
        return self.bits[positions].all(axis=1)

    def to_bytes(self) -> bytes:
        header = _HEADER.pack(_VERSION, self.num_hashes, _MURMUR, self.vector_size)
        return header + np.packbits(self.bits, bitorder="little").tobytes()

    @classmethod
    def read(cls, reader: _Reader) -> _BitRow:
        vector_size, num_hashes = reader.header()
        raw = np.frombuffer(reader.take((vector_size + 7) // 8), dtype=np.uint8)
        bits = np.unpackbits(raw, count=vector_size, bitorder="little").view(bool)
        return cls(vector_size, num_hashes, bits)


class _Reader:
    """Reads a decoded filter, turning truncation or unknown formats into InvalidTableError."""

    def __init__(self, raw: bytes) -> None:
        self.raw = raw
        self.pos = 0

    def take(self, n: int) -> bytes:
        if self.pos + n > len(self.raw):
            raise InvalidTableError(f"bloom filter is truncated at byte {len(self.raw)} of {self.pos + n}")
        self.pos += n
        return self.raw[self.pos - n : self.pos]

    def header(self) -> tuple[int, int]:
        version, num_hashes, hash_type, vector_size = _HEADER.unpack(self.take(_HEADER.size))
        if version != _VERSION or hash_type != _MURMUR or num_hashes <= 0 or vector_size <= 0:
            raise InvalidTableError(
                f"unsupported bloom filter header: version {version}, hash type {hash_type}, "
                f"{num_hashes} hashes, {vector_size} bits"
            )
        return vector_size, num_hashes

    def end(self) -> None:
        if self.pos != len(self.raw):
            raise InvalidTableError(f"bloom filter has {len(self.raw) - self.pos} unexpected trailing bytes")


def _sizes(num_entries: int, fpp: float) -> tuple[int, int]:
    """(vectorSize, nbHash) as Hudi's BloomFilterUtils computes them."""
    if num_entries <= 0 or not 0.0 < fpp < 1.0:
        raise ConfigError(f"bloom filter needs num_entries > 0 and 0 < fpp < 1, got {num_entries} and {fpp}")
    vector_size = math.ceil(num_entries * (-math.log(fpp) / (math.log(2) * math.log(2))))
    if vector_size >= 2**31:
        raise ConfigError(f"bloom filter of {vector_size} bits exceeds Java's int range; lower num_entries")
    return vector_size, math.ceil(math.log(2) * vector_size / num_entries)


# -- filters ------------------------------------------------------------------------------------------


class BloomFilter(ABC):
    """A Hudi bloom filter over record keys; `deserialize` reads one from a base file footer."""

    type_code: ClassVar[str]

    def __init__(self, vector_size: int, num_hashes: int) -> None:
        self.vector_size = vector_size
        self.num_hashes = num_hashes

    def add(self, key: str) -> None:
        self.add_all([key])

    def add_all(self, keys: Keys) -> None:
        for batch in _batches(keys):
            self._add_positions(hash_positions(batch, self.num_hashes, self.vector_size))

    def might_contain(self, key: str) -> bool:
        return bool(self.might_contain_all([key])[0])

    def might_contain_all(self, keys: Sequence[str] | pa.Array | pa.ChunkedArray) -> np.ndarray:
        """A bool per key: False means the key is surely absent."""
        parts = [self._test_positions(hash_positions(b, self.num_hashes, self.vector_size))
                 for b in _batches(keys)]
        return np.concatenate(parts) if parts else np.zeros(0, dtype=bool)

    def serialize(self) -> str:
        """The footer value: base64 of Hadoop's DataOutput form."""
        return base64.b64encode(self._to_bytes()).decode("ascii")

    @classmethod
    def deserialize(cls, text: str, type_code: str) -> BloomFilter:
        """Read a footer value; `type_code` (DYNAMIC_V0 or SIMPLE) picks the class."""
        kinds: dict[str, type[BloomFilter]] = {DYNAMIC_V0: DynamicBloomFilter, SIMPLE: SimpleBloomFilter}
        kind = kinds.get(type_code)
        if kind is None:
            raise InvalidTableError(f"bloom filter type code {type_code!r} is not {DYNAMIC_V0} or {SIMPLE}")
        try:
            raw = base64.b64decode(text, validate=True)
        except (binascii.Error, ValueError) as e:
            raise InvalidTableError(f"bloom filter is not valid base64: {e}") from None
        reader = _Reader(raw)
        bloom = kind._read(reader)
        reader.end()
        return bloom

    @abstractmethod
    def _add_positions(self, positions: np.ndarray) -> None: ...

    @abstractmethod
    def _test_positions(self, positions: np.ndarray) -> np.ndarray: ...

    @abstractmethod
    def _to_bytes(self) -> bytes: ...

    @classmethod
    @abstractmethod
    def _read(cls, reader: _Reader) -> BloomFilter: ...


class SimpleBloomFilter(BloomFilter):
    """Hudi's SimpleBloomFilter (SIMPLE): one fixed-size bit vector."""

    type_code = SIMPLE

    def __init__(self, num_entries: int = 60000, fpp: float = 1e-9) -> None:
        super().__init__(*_sizes(num_entries, fpp))
        self._row = _BitRow(self.vector_size, self.num_hashes)

    def _add_positions(self, positions: np.ndarray) -> None:
        self._row.set(positions)

    def _test_positions(self, positions: np.ndarray) -> np.ndarray:
        return self._row.test(positions)

    def _to_bytes(self) -> bytes:
        return self._row.to_bytes()

    @classmethod
    def _read(cls, reader: _Reader) -> SimpleBloomFilter:
        row = _BitRow.read(reader)
        bloom = cls.__new__(cls)
        BloomFilter.__init__(bloom, row.vector_size, row.num_hashes)
        bloom._row = row
        return bloom


class DynamicBloomFilter(BloomFilter):
    """HoodieDynamicBoundedBloomFilter (DYNAMIC_V0): rows of `num_entries` keys each, up to `max_entries`.

    A new row starts each time the last one holds `num_entries` keys, until rows x num_entries reaches
    `max_entries`; from then on keys go round-robin over the rows (row 0 takes two in a row, as in Java).
    """

    type_code = DYNAMIC_V0

    def __init__(self, num_entries: int = 60000, fpp: float = 1e-9, max_entries: int = 100000) -> None:
        super().__init__(*_sizes(num_entries, fpp))
        self._num_entries = num_entries
        self._max_entries = max_entries
        self._current = 0  # keys added since the last row was started (Java: currentNbRecord)
        self._rows = [_BitRow(self.vector_size, self.num_hashes)]
        self._reached_max = False
        self._cursor = 0  # round-robin index once the bound is reached (Java: curMatrixIndex)

    def _add_positions(self, positions: np.ndarray) -> None:
        rows = self._assign_rows(len(positions))
        for r, row in enumerate(self._rows):
            row.set(positions[rows == r])

    def _assign_rows(self, n: int) -> np.ndarray:
        """The row of each of the next n keys, advancing the state as Java's getActiveStandardBF does."""
        out = np.empty(n, dtype=np.int64)
        i = 0
        while i < n:
            if self._reached_max:
                out[i:] = (self._cursor + np.arange(n - i)) % len(self._rows)
                self._cursor += n - i
                self._current += n - i
                break
            if self._current < self._num_entries:
                take = min(n - i, self._num_entries - self._current)
                out[i : i + take] = len(self._rows) - 1
                self._current += take
                i += take
            elif len(self._rows) * self._num_entries < self._max_entries:
                self._rows.append(_BitRow(self.vector_size, self.num_hashes))
                self._current = 0
            else:
                self._reached_max = True
                out[i] = 0
                self._current += 1
                i += 1
        return out

    def _test_positions(self, positions: np.ndarray) -> np.ndarray:
        found = np.zeros(len(positions), dtype=bool)
        for row in self._rows:
            found |= row.test(positions)
        return found

    def _to_bytes(self) -> bytes:
        head = _HEADER.pack(_VERSION, self.num_hashes, _MURMUR, self.vector_size)
        state = _DYNAMIC_STATE.pack(self._num_entries, self._current, len(self._rows))
        return b"".join([head, state, *(row.to_bytes() for row in self._rows)])

    @classmethod
    def _read(cls, reader: _Reader) -> DynamicBloomFilter:
        vector_size, num_hashes = reader.header()
        num_entries, current, n_rows = _DYNAMIC_STATE.unpack(reader.take(_DYNAMIC_STATE.size))
        if num_entries <= 0 or current < 0 or n_rows <= 0:
            raise InvalidTableError(
                f"corrupt dynamic bloom filter: {num_entries} entries per row, {current} keys, {n_rows} rows"
            )
        rows = [_BitRow.read(reader) for _ in range(n_rows)]
        if any((r.vector_size, r.num_hashes) != (vector_size, num_hashes) for r in rows):
            raise InvalidTableError("corrupt dynamic bloom filter: a row's size differs from the filter's")
        bloom = cls.__new__(cls)
        BloomFilter.__init__(bloom, vector_size, num_hashes)
        bloom._num_entries = num_entries
        # Java does not serialize maxNr: a read filter has 0 and goes round-robin once its last row is full.
        bloom._max_entries = 0
        bloom._current = current
        bloom._rows = rows
        bloom._reached_max = False
        bloom._cursor = 0
        return bloom


def bloom_filter_from_config(num_entries: int, fpp: float, max_entries: int, type_code: str) -> BloomFilter:
    """A new empty filter as Hudi's BloomFilterFactory.createBloomFilter builds it."""
    code = type_code.upper()
    if code == DYNAMIC_V0:
        return DynamicBloomFilter(num_entries, fpp, max_entries)
    if code == SIMPLE:
        return SimpleBloomFilter(num_entries, fpp)
    raise ConfigError(f"hoodie.bloom.index.filter.type={type_code!r} is not valid; use DYNAMIC_V0 or SIMPLE")
