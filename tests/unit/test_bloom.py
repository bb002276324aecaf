"""Hudi bloom filters: bit-identical to Spark-written footers, Java hashing semantics, dynamic row bounds."""

from __future__ import annotations

import base64
import math
import random
import struct
import subprocess
from itertools import pairwise

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from hudi_ops.errors import ConfigError, InvalidInputError, InvalidTableError
from hudi_ops.format.bloom import (
    BloomFilter,
    DynamicBloomFilter,
    SimpleBloomFilter,
    bloom_filter_from_config,
    hash_positions,
)
from tests.shared_data import FIXTURES

TABLES = [
    "sample_table/cow/v6_simplekeygen_nonhivestyle.zip",
    "sample_table/cow/v8_complexkeygen_hivestyle.zip",
    "sample_table/mor/parquet/v6_complexkeygen_hivestyle.zip",
    "quickstart_trips_table/mor/avro/v6_trips_8i1u.zip",
    "quickstart_trips_table/mor/avro/v8_trips_8i3u1d.zip",
]


Footers = list[tuple[str, list[str], str]]


@pytest.fixture(scope="module")
def footers(tmp_path_factory: pytest.TempPathFactory) -> Footers:
    """(file, record keys, serialized footer filter) for every Spark-written base file of TABLES."""
    out = []
    for i, zip_name in enumerate(TABLES):
        dest = tmp_path_factory.mktemp(f"table{i}")
        unzip = ["unzip", "-q", str(FIXTURES / zip_name), "-x", "__MACOSX/*", "-d", str(dest)]
        subprocess.run(unzip, check=True, capture_output=True)
        for path in sorted(dest.rglob("*.parquet")):
            meta = pq.read_metadata(path).metadata or {}
            if ".hoodie" in path.parts or b"org.apache.hudi.bloomfilter" not in meta:
                continue
            assert meta[b"hoodie_bloom_filter_type_code"] == b"DYNAMIC_V0"
            keys = pq.read_table(path, columns=["_hoodie_record_key"]).column(0).to_pylist()
            out.append((path.name, keys, meta[b"org.apache.hudi.bloomfilter"].decode()))
    assert len(out) >= 20
    return out


def java_murmur(data: bytes, seed: int) -> int:
    """Scalar oracle: Hadoop MurmurHash2 in Java int arithmetic, returning a signed int."""
    m, mask = 0x5BD1E995, 0xFFFFFFFF
    h = (seed ^ len(data)) & mask
    n_words = len(data) // 4
    for (k,) in struct.iter_unpack("<I", data[: 4 * n_words]):
        k = (k * m) & mask
        k ^= k >> 24
        h = ((h * m) & mask) ^ ((k * m) & mask)
    tail = data[4 * n_words :]
    if tail:
        signed = [b - 256 if b >= 128 else b for b in tail]
        for shift, b in zip((0, 8, 16), reversed(signed), strict=False):
            h ^= (b << shift) & mask
        h = (h * m) & mask
    h ^= h >> 13
    h = (h * m) & mask
    h ^= h >> 15
    return h - (1 << 32) if h >= 1 << 31 else h


def java_positions(key: str, num_hashes: int, vector_size: int) -> list[int]:
    out, h = [], 0
    for _ in range(num_hashes):
        h = java_murmur(key.encode(), h)
        out.append(abs(int(math.fmod(h, vector_size))))  # Math.abs(h % vectorSize), % truncating
    return out


def test_reproduces_spark_footers_bit_identically(footers: Footers) -> None:
    for name, keys, footer in footers:
        bloom = DynamicBloomFilter()
        bloom.add_all(keys)
        assert bloom.serialize() == footer, name


def test_deserialized_footer_round_trips_and_finds_its_keys(footers: Footers) -> None:
    all_keys = [k for _, keys, _ in footers for k in keys]
    for name, keys, footer in footers:
        bloom = BloomFilter.deserialize(footer, "DYNAMIC_V0")
        assert isinstance(bloom, DynamicBloomFilter)
        assert bloom.serialize() == footer
        assert bloom.might_contain_all(keys).all(), name
        others = [k for k in all_keys if k not in set(keys)]
        assert not bloom.might_contain_all(others).any(), name


def test_java_defaults() -> None:
    bloom = DynamicBloomFilter()
    assert (bloom.vector_size, bloom.num_hashes) == (2_587_966, 30)
    assert len(bloom.serialize()) == 431_380


def test_hash_positions_match_java_for_every_tail_length_and_non_ascii() -> None:
    rnd = random.Random(7)
    alphabet = ["a", "Z", "9", "é", "ß", "€", "中", "\U0001f600", "\x7f", "\x00"]
    keys = ["", *("".join(rnd.choice(alphabet) for _ in range(rnd.randint(1, 13))) for _ in range(400))]
    assert {len(k.encode()) % 4 for k in keys} == {0, 1, 2, 3}
    got = hash_positions(keys, 30, 2_587_966)
    assert got.shape == (len(keys), 30)
    for key, row in zip(keys, got, strict=True):
        assert row.tolist() == java_positions(key, 30, 2_587_966), key


def test_might_contain_true_for_added_and_false_for_most_others() -> None:
    for bloom in (DynamicBloomFilter(), SimpleBloomFilter()):
        keys = [f"uuid-{i:06d}" for i in range(20_000)]
        bloom.add_all(keys)
        bloom.add("one more key")
        assert bloom.might_contain_all(keys).all()
        assert bloom.might_contain("one more key")
        assert bloom.might_contain_all(pa.array(keys)).all()
        assert bloom.might_contain_all([f"other-{i}" for i in range(20_000)]).sum() <= 2
        assert not bloom.might_contain("absent")


def test_add_all_accepts_iterables_and_chunked_arrays_alike() -> None:
    keys = [f"k{i}" for i in range(1000)]
    a, b, c = DynamicBloomFilter(), DynamicBloomFilter(), DynamicBloomFilter()
    a.add_all(keys)
    b.add_all(iter(keys))
    c.add_all(pa.chunked_array([keys[:300], keys[300:]]))
    assert a.serialize() == b.serialize() == c.serialize()


def test_dynamic_rows_follow_java_bounds_and_round_robin() -> None:
    # 10 keys a row, bounded at 25: rows 0, 1, 2 fill up, then keys go to rows 0, 0, 1, 2, 0, 1, 2, ...
    keys = [f"key-{i}" for i in range(47)]
    batched, single = DynamicBloomFilter(10, 0.01, 25), DynamicBloomFilter(10, 0.01, 25)
    for start, end in pairwise([0, 7, 23, 30, 31, 40, 47]):
        batched.add_all(keys[start:end])
    for key in keys:
        single.add(key)

    row_of = [i // 10 for i in range(30)] + [0] + [i % 3 for i in range(16)]
    rows = [SimpleBloomFilter(10, 0.01) for _ in range(3)]
    for key, r in zip(keys, row_of, strict=True):
        rows[r].add(key)
    head = base64.b64decode(rows[0].serialize())[:13]
    expected = head + struct.pack(">iii", 10, 47 - 20, 3)
    expected += b"".join(base64.b64decode(r.serialize()) for r in rows)
    assert base64.b64decode(batched.serialize()) == expected
    assert single.serialize() == batched.serialize()


def test_simple_filter_round_trip() -> None:
    bloom = bloom_filter_from_config(1000, 0.001, 5000, "simple")
    assert isinstance(bloom, SimpleBloomFilter)
    bloom.add_all(["a", "b"])
    text = bloom.serialize()
    raw = base64.b64decode(text)
    assert struct.unpack(">iibi", raw[:13]) == (-1, bloom.num_hashes, 1, bloom.vector_size)
    assert len(raw) == 13 + (bloom.vector_size + 7) // 8
    back = BloomFilter.deserialize(text, "SIMPLE")
    assert isinstance(back, SimpleBloomFilter)
    assert back.serialize() == text
    assert back.might_contain_all(["a", "b", "c"]).tolist() == [True, True, False]


def test_deserialized_dynamic_filter_keeps_adding_like_java() -> None:
    bloom = DynamicBloomFilter(10, 0.01, 100)
    bloom.add_all([f"k{i}" for i in range(5)])
    back = BloomFilter.deserialize(bloom.serialize(), "DYNAMIC_V0")
    more = [f"m{i}" for i in range(20)]
    bloom.add_all(more)
    back.add_all(more)
    assert back.might_contain_all(more).all()
    # Java does not serialize maxNr: the read filter goes round-robin instead of adding rows.
    assert back.serialize() != bloom.serialize()
    assert struct.unpack(">i", base64.b64decode(back.serialize())[21:25]) == (1,)


def test_from_config() -> None:
    assert isinstance(bloom_filter_from_config(60000, 1e-9, 100000, "DYNAMIC_V0"), DynamicBloomFilter)
    with pytest.raises(ConfigError):
        bloom_filter_from_config(60000, 1e-9, 100000, "CUCKOO")
    with pytest.raises(ConfigError):
        bloom_filter_from_config(0, 1e-9, 100000, "SIMPLE")
    with pytest.raises(ConfigError):
        bloom_filter_from_config(100, 1.5, 100000, "SIMPLE")


def _b64(raw: bytes) -> str:
    return base64.b64encode(raw).decode()


HEADER_8_BITS = struct.pack(">iibi", -1, 3, 1, 8)


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ("not base64!", "DYNAMIC_V0"),
        (_b64(b"\xff\xff\xff\xff\x00"), "SIMPLE"),  # truncated header
        (_b64(struct.pack(">iibi", -1, 3, 0, 8) + b"\x00"), "SIMPLE"),  # Jenkins hash
        (_b64(HEADER_8_BITS + b"\x00\x00"), "SIMPLE"),  # trailing byte
        (_b64(HEADER_8_BITS + b"\x00"), "BOGUS"),
        (_b64(HEADER_8_BITS + struct.pack(">iii", 10, 0, 2)), "DYNAMIC_V0"),  # rows missing
    ],
)
def test_corrupt_filters_are_invalid_table_errors(text: str, code: str) -> None:
    with pytest.raises(InvalidTableError):
        BloomFilter.deserialize(text, code)


def test_null_or_non_string_keys_are_rejected() -> None:
    with pytest.raises(InvalidInputError):
        DynamicBloomFilter().add_all(pa.array(["a", None]))
    with pytest.raises(InvalidInputError):
        DynamicBloomFilter().add_all(pa.array([1, 2]))


def test_empty_input() -> None:
    bloom = SimpleBloomFilter(100, 0.01)
    bloom.add_all([])
    assert bloom.might_contain_all([]).dtype == np.bool_
    assert len(bloom.might_contain_all([])) == 0
