"""Parquet base files: Hudi footer, row round trips, timestamps, fixture footers, error mapping."""

from __future__ import annotations

import datetime as dt
import json
import subprocess
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from hudi_ops.errors import InvalidInputError, InvalidTableError
from hudi_ops.format.base_file import (
    BaseFileFooter,
    WrittenFile,
    read_base_file,
    read_footer,
    read_record_keys,
    write_base_file,
)
from hudi_ops.format.bloom import DynamicBloomFilter, SimpleBloomFilter
from hudi_ops.format.meta_fields import META_FIELDS
from hudi_ops.storage import Storage
from tests.shared_data import FIXTURES

NAME = "0f4c6e3a-1b2c-4d5e-8f90-123456789abc-0_0-0-0_20250101000000000.parquet"


def make_table(keys: list[str], **columns: pa.Array) -> pa.Table:
    n = len(keys)
    meta = {
        "_hoodie_commit_time": ["20250101000000000"] * n,
        "_hoodie_commit_seqno": [f"20250101000000000_0_{i}" for i in range(n)],
        "_hoodie_record_key": keys,
        "_hoodie_partition_path": ["city=chennai"] * n,
        "_hoodie_file_name": [NAME] * n,
    }
    return pa.table({**{k: pa.array(v, pa.string()) for k, v in meta.items()}, **columns})


@pytest.fixture
def storage(tmp_path: Path) -> Storage:
    return Storage.for_uri(tmp_path)


def test_write_then_read_footer_and_rows(storage: Storage) -> None:
    keys = [f"id-{i:05d}" for i in range(2000)][::-1]
    table = make_table(keys, fare=pa.array([float(i) for i in range(2000)]), rider=pa.array(["r"] * 2000))
    rel = f"city=chennai/{NAME}"
    written = write_base_file(storage, rel, table, bloom=DynamicBloomFilter())

    assert written == WrittenFile(rel, 2000, storage.info(rel).size, "id-00000", "id-01999")
    footer = read_footer(storage, rel)
    assert (footer.bloom_type_code, footer.min_record_key, footer.max_record_key, footer.num_rows) == (
        "DYNAMIC_V0", "id-00000", "id-01999", 2000,
    )
    expected = DynamicBloomFilter()
    expected.add_all(keys)
    assert footer.serialized_bloom == expected.serialize()
    bloom = footer.bloom_filter()
    assert isinstance(bloom, DynamicBloomFilter)
    assert bloom.might_contain_all(keys).all()

    back = read_base_file(storage, rel)
    assert back.column_names == table.column_names  # the hive-style folder adds no `city` column
    assert back.equals(table)
    assert read_record_keys(storage, rel).equals(pa.array(keys))
    some = read_base_file(storage, rel, columns=["fare"], filter=pc.field("fare") >= 1990)
    assert some.column("fare").to_pylist() == [float(i) for i in range(1990, 2000)]


def test_footer_does_not_embed_the_bloom_twice(storage: Storage) -> None:
    table = make_table(["a", "b"], x=pa.array([1, 2])).replace_schema_metadata({"pandas": "x" * 100_000})
    written = write_base_file(storage, NAME, table, bloom=DynamicBloomFilter())
    meta = pq.read_metadata(storage.full_path(NAME)).metadata
    assert set(meta) == {
        b"ARROW:schema", b"org.apache.hudi.bloomfilter", b"hoodie_bloom_filter_type_code",
        b"hoodie_min_record_key", b"hoodie_max_record_key",
    }
    assert len(meta[b"ARROW:schema"]) < 2_000
    assert written.size_bytes < 431_380 + 5_000


def test_parquet_is_format_2_6_with_microsecond_timestamps(storage: Storage) -> None:
    naive = dt.datetime(2024, 3, 1, 12, 30, 45, 123456)
    aware = dt.datetime(2024, 3, 1, 12, 30, 45, 654321, tzinfo=dt.UTC)
    table = make_table(
        ["k1", "k2"],
        ts=pa.array([naive, None], pa.timestamp("ns")),
        ts_utc=pa.array([aware, aware], pa.timestamp("ns", tz="UTC")),
        ts_ms=pa.array([naive.replace(microsecond=123000)] * 2, pa.timestamp("ms")),
        nested=pa.array([{"at": naive}, None], pa.struct([("at", pa.timestamp("ns"))])),
    )
    write_base_file(storage, NAME, table, bloom=None, compression="SNAPPY")

    pf = pq.ParquetFile(storage.full_path(NAME))
    assert pf.metadata.format_version == "2.6"
    assert pf.metadata.row_group(0).column(0).compression == "SNAPPY"
    units = {
        pf.schema.column(i).path: json.loads(pf.schema.column(i).logical_type.to_json())["timeUnit"]
        for i in range(5, pf.metadata.num_columns)
    }
    assert units == dict.fromkeys(["ts", "ts_utc", "ts_ms", "nested.at"], "microseconds")
    back = read_base_file(storage, NAME)
    assert back.column("ts").to_pylist() == [naive, None]
    assert back.column("ts_utc").to_pylist() == [aware, aware]
    assert back.column("ts_utc").type.tz == "UTC"
    assert back.column("ts_ms").to_pylist() == [naive.replace(microsecond=123000)] * 2
    assert back.column("nested").to_pylist() == [{"at": naive}, None]
    footer = read_footer(storage, NAME)
    assert (footer.serialized_bloom, footer.bloom_type_code, footer.bloom_filter()) == (None, None, None)


def test_sub_microsecond_timestamps_are_refused_and_leave_no_file(storage: Storage) -> None:
    table = make_table(["k"], ts=pa.array([1_000_001], pa.timestamp("ns")))
    with pytest.raises(InvalidInputError, match="lose data"):
        write_base_file(storage, f"p/{NAME}", table, bloom=None)
    assert not storage.exists(f"p/{NAME}")


def test_row_groups_follow_row_group_bytes(storage: Storage) -> None:
    keys = [f"{i:06d}" for i in range(10_000)]
    table = make_table(keys, payload=pa.array(["x" * 100] * 10_000))
    write_base_file(storage, NAME, table, bloom=SimpleBloomFilter(), row_group_bytes=400_000, page_size=8192)
    meta = pq.read_metadata(storage.full_path(NAME))
    assert 3 <= meta.num_row_groups <= 12
    assert read_footer(storage, NAME).bloom_type_code == "SIMPLE"


def test_empty_file_has_bloom_but_no_key_range(storage: Storage) -> None:
    written = write_base_file(storage, NAME, make_table([]), bloom=DynamicBloomFilter())
    assert (written.num_rows, written.min_record_key, written.max_record_key) == (0, None, None)
    footer = read_footer(storage, NAME)
    assert footer == BaseFileFooter("DYNAMIC_V0", DynamicBloomFilter().serialize(), None, None, 0)


def test_key_range_uses_java_string_order(storage: Storage) -> None:
    # UTF-8 puts U+10000 after U+FFFF; Java's UTF-16 order puts its surrogates (D800) before FFFF.
    written = write_base_file(storage, NAME, make_table(["\uffff", "a", "\U00010000"]), bloom=None)
    assert (written.min_record_key, written.max_record_key) == ("a", "\uffff")
    written = write_base_file(storage, NAME, make_table(["\uffff", "\U00010000"]), bloom=None)
    assert (written.min_record_key, written.max_record_key) == ("\U00010000", "\uffff")


def test_legacy_bloom_key_without_type_code_reads_as_simple(storage: Storage) -> None:
    bloom = SimpleBloomFilter(100, 0.01)
    bloom.add("k")
    table = make_table(["k"]).replace_schema_metadata({"com.uber.hoodie.bloomfilter": bloom.serialize()})
    pq.write_table(table, storage.full_path(NAME))
    footer = read_footer(storage, NAME)
    assert footer.bloom_type_code is None and footer.serialized_bloom == bloom.serialize()
    back = footer.bloom_filter()
    assert isinstance(back, SimpleBloomFilter) and back.might_contain("k")


@pytest.mark.parametrize(
    "zip_name",
    ["sample_table/cow/v6_simplekeygen_nonhivestyle.zip", "sample_table/cow/v8_complexkeygen_hivestyle.zip",
     "quickstart_trips_table/mor/avro/v8_trips_8i3u1d.zip"],
)
def test_fixture_footers_are_reproduced(tmp_path: Path, zip_name: str) -> None:
    subprocess.run(
        ["unzip", "-q", str(FIXTURES / zip_name), "-x", "__MACOSX/*", "-d", str(tmp_path)],
        check=True, capture_output=True,
    )
    (root,) = [p for p in tmp_path.iterdir() if p.is_dir()]
    storage = Storage.for_uri(root)
    files = [p.relative_to(root).as_posix() for p in root.rglob("*.parquet") if ".hoodie" not in p.parts]
    assert files
    for rel in files:
        footer = read_footer(storage, rel)
        keys = read_record_keys(storage, rel)
        assert footer.bloom_type_code == "DYNAMIC_V0"
        assert (footer.min_record_key, footer.max_record_key) == (min(keys.tolist()), max(keys.tolist()))
        assert footer.num_rows == len(keys)
        bloom = DynamicBloomFilter()
        bloom.add_all(keys)
        assert bloom.serialize() == footer.serialized_bloom, rel
        assert footer.bloom_filter().might_contain_all(keys).all()


def test_bad_input_is_refused(storage: Storage) -> None:
    with pytest.raises(InvalidInputError, match="first columns"):
        write_base_file(storage, NAME, pa.table({"x": [1]}), bloom=None)
    with pytest.raises(InvalidInputError, match="null"):
        write_base_file(storage, NAME, make_table(["a", None]), bloom=None)  # type: ignore[list-item]
    with pytest.raises(InvalidInputError, match="compression"):
        write_base_file(storage, NAME, make_table(["a"]), bloom=None, compression="bzip9")
    assert make_table([]).column_names[:5] == list(META_FIELDS)


def test_corrupt_or_missing_files(storage: Storage) -> None:
    storage.write_bytes("junk.parquet", b"not a parquet file at all")
    with pytest.raises(InvalidTableError):
        read_footer(storage, "junk.parquet")
    with pytest.raises(InvalidTableError):
        read_base_file(storage, "junk.parquet")
    write_base_file(storage, NAME, make_table(["a"]), bloom=None)
    data = bytearray(storage.read_bytes(NAME))
    footer_len = int.from_bytes(data[-8:-4], "little")
    data[-8 - footer_len : -8] = b"\xff" * footer_len
    storage.write_bytes("garbled.parquet", bytes(data))
    with pytest.raises(InvalidTableError):
        read_footer(storage, "garbled.parquet")
    with pytest.raises(FileNotFoundError):
        read_footer(storage, "missing.parquet")
