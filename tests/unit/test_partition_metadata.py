""".hoodie_partition_metadata: depth, the exact file Spark writes, write-once semantics, fixtures."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from hudi_ops.errors import InvalidTableError
from hudi_ops.format.partition_metadata import (
    PartitionMetadata,
    partition_depth,
    read_partition_metadata,
    write_partition_metadata,
)
from hudi_ops.storage import Storage

FIXTURES = Path("/work/shared/fixtures/hudi-rs")


def unzip(zip_name: str, dest: Path) -> Path:
    subprocess.run(["unzip", "-q", str(FIXTURES / zip_name), "-x", "__MACOSX/*", "-d", str(dest)],
                   check=True, capture_output=True)
    return next(p.parent.parent for p in dest.rglob("hoodie.properties") if p.parent.parent.name != "metadata")


@pytest.mark.parametrize(
    ("path", "depth"),
    [("", 0), ("/", 0), ("city=chennai", 1), ("10", 1), ("byteField=10/shortField=300", 2), ("2024/04/18/", 3)],
)
def test_partition_depth(path: str, depth: int) -> None:
    assert partition_depth(path) == depth


def test_write_then_read(tmp_path: Path) -> None:
    storage = Storage.for_uri(tmp_path)
    assert write_partition_metadata(storage, "byteField=10/shortField=300", "20250713011315930")
    lines = (tmp_path / "byteField=10/shortField=300/.hoodie_partition_metadata").read_text().splitlines()
    assert lines[0] == "#partition metadata"
    assert lines[1].startswith("#") and " UTC " in lines[1]
    assert lines[2:] == ["commitTime=20250713011315930", "partitionDepth=2"]
    assert read_partition_metadata(storage, "byteField=10/shortField=300") == PartitionMetadata(
        "20250713011315930", 2
    )


def test_written_once(tmp_path: Path) -> None:
    storage = Storage.for_uri(tmp_path)
    assert write_partition_metadata(storage, "", "20250101000000000")
    assert not write_partition_metadata(storage, "", "20250202000000000")
    assert read_partition_metadata(storage, "") == PartitionMetadata("20250101000000000", 0)
    assert (tmp_path / ".hoodie_partition_metadata").exists()


def test_losing_a_creation_race_is_fine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    storage = Storage.for_uri(tmp_path)
    write_partition_metadata(storage, "a", "20250101000000000")
    monkeypatch.setattr(storage, "exists", lambda rel: False)  # the other writer created it after our check
    assert not write_partition_metadata(storage, "a", "20250202000000000")
    assert read_partition_metadata(storage, "a") == PartitionMetadata("20250101000000000", 1)


def test_missing_and_damaged(tmp_path: Path) -> None:
    storage = Storage.for_uri(tmp_path)
    assert read_partition_metadata(storage, "nowhere") is None
    storage.write_bytes("p/.hoodie_partition_metadata", b"#partition metadata\ncommitTime=1\n")
    with pytest.raises(InvalidTableError, match="partitionDepth"):
        read_partition_metadata(storage, "p")


@pytest.mark.parametrize(
    ("zip_name", "partition", "depth"),
    [
        ("sample_table/cow/v8_complexkeygen_hivestyle.zip", "byteField=10/shortField=300", 2),
        ("sample_table/cow/v6_simplekeygen_nonhivestyle.zip", "10", 1),
        ("sample_table/cow/v8_nonpartitioned.zip", "", 0),
        ("quickstart_trips_table/mor/avro/v8_trips_8i3u1d.zip", "city=chennai", 1),
    ],
)
def test_fixture_partitions(tmp_path: Path, zip_name: str, partition: str, depth: int) -> None:
    root = unzip(zip_name, tmp_path)
    storage = Storage.for_uri(root)
    meta = read_partition_metadata(storage, partition)
    assert meta is not None
    assert meta.partition_depth == depth == partition_depth(partition)
    assert len(meta.commit_time) == 17
    # ours has the same shape line for line as Spark's
    ours = Storage.for_uri(tmp_path / "ours")
    write_partition_metadata(ours, partition, meta.commit_time)
    theirs = storage.read_bytes(f"{partition}/.hoodie_partition_metadata".lstrip("/")).decode().splitlines()
    mine = ours.read_bytes(f"{partition}/.hoodie_partition_metadata".lstrip("/")).decode().splitlines()
    assert [mine[0], *mine[2:]] == [theirs[0], *theirs[2:]]
