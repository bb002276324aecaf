"""Hudi's metadata table read without a JVM: the HFiles it stores records in, and its `files` partition,
which the control plane reads instead of listing every partition of a table.

Judged against what Hudi wrote: the HFiles of Hudi's and HBase's own tests (their keys and values are
known), and every fixture table that has a `files` partition, whose files must be exactly those a
listing finds for the completed instants. Cases the metadata table must leave out are made by undoing
a completion on one table or the other.
"""

from __future__ import annotations

import shutil
import struct
import zipfile
from pathlib import Path

import pytest

from hudi_ops.errors import InvalidTableError
from hudi_ops.format import meta_client as meta_client_module
from hudi_ops.format.file_names import LogFileName
from hudi_ops.format.hfile import HFile
from hudi_ops.format.instant import Action, Instant
from hudi_ops.format.log_blocks import MAGIC, BlockType, log_blocks
from hudi_ops.format.meta_client import MetaClient
from hudi_ops.format.metadata_table import METADATA_FOLDER, files_partition
from tests.shared_data import FIXTURES
from tests.tables import files_by_listing, files_by_metadata_table

HFILES = FIXTURES / "core-tests-data" / "hfile"


def _has_files_partition(zip_path: Path) -> bool:
    with zipfile.ZipFile(zip_path) as z:
        props = next((m for m in z.namelist() if m.endswith(".hoodie/hoodie.properties")
                      and "/metadata/" not in m and not m.startswith("__MACOSX/")), None)
        text = z.read(props).decode() if props else ""
    partitions = next((line.split("=", 1)[1] for line in text.splitlines()
                       if line.startswith("hoodie.table.metadata.partitions=")), "")
    return "files" in partitions.split(",")


#: every fixture table whose hoodie.properties lists a complete files partition
WITH_FILES_PARTITION = sorted(str(z.relative_to(FIXTURES).with_suffix("")) for z in FIXTURES.rglob("*.zip")
                              if _has_files_partition(z))
MOR_TXNS = "sample_table/mor/avro/v9_txns_simple_meta"


@pytest.mark.parametrize(("name", "count"), [
    ("hudi_1_0_hbase_2_4_9_16KB_NONE_5000.hfile", 5000),
    ("hudi_1_0_hbase_2_4_9_64KB_NONE_5000.hfile", 5000),
    ("hudi_1_0_hbase_2_4_9_16KB_GZ_20000.hfile", 20000),
    ("hudi_1_0_hbase_2_4_9_512KB_GZ_20000.hfile", 20000),
])
def test_an_hfile_yields_every_cell_in_key_order_plain_or_gzipped(name, count):
    cells = list(HFile((HFILES / name).read_bytes(), name).items())
    assert [k for k, _ in cells] == [f"hudi-key-{i:09d}".encode() for i in range(count)]
    assert [v for _, v in cells] == [f"hudi-value-{i:09d}".encode() for i in range(count)]


def test_an_hfile_with_a_deep_index_long_keys_repeated_keys_or_no_cell():
    deep = HFile((HFILES / "hudi_1_0_hbase_2_4_13_1KB_GZ_10000_large_keys_deep_index.hfile").read_bytes())
    keys = [k for k, _ in deep.items()]  # leaf and intermediate index blocks sit between the data blocks
    assert keys == [b"hudi-key-" + b"a" * 100 + f"-{i:09d}".encode() for i in range(10000)]
    repeated = HFile((HFILES / "hudi_1_0_hbase_2_4_9_16KB_GZ_200_20_non_unique.hfile").read_bytes())
    cells = list(repeated.items())
    assert len(cells) == 4200 and len({k for k, _ in cells}) == 200 and cells == sorted(cells, key=lambda c: c[0])
    empty = HFile((HFILES / "hudi_1_0_hbase_2_4_9_no_entry.hfile").read_bytes())
    assert list(empty.items()) == [] and empty.file_info[b"bloomFilterTypeCode"]
    custom = HFile((HFILES / "hudi_1_0_hbase_2_4_9_16KB_NONE_5000.hfile").read_bytes()).file_info
    assert custom[b"hudi_hfile_testing.custom_key"] == b"hudi_custom_value"


def test_a_block_whose_size_the_file_cannot_hold_is_refused_not_looped_over():
    data = bytearray((HFILES / "hudi_1_0_hbase_2_4_9_16KB_GZ_20000.hfile").read_bytes())
    struct.pack_into(">i", data, 8, -33)  # the first block's on-disk size: the next block would start before it
    with pytest.raises(InvalidTableError, match="block at offset 0 says it holds -33 bytes"):
        list(HFile(bytes(data), "x.hfile").items())


def test_bytes_that_are_no_hfile_are_refused_naming_the_file():
    with pytest.raises(InvalidTableError, match=r"x\.hfile is not an HFile"):
        HFile(b"\x00" * 5000, "x.hfile")


@pytest.mark.parametrize("table", WITH_FILES_PARTITION)
def test_the_files_partition_names_exactly_the_files_a_listing_finds(table, fixture_table):
    from_mdt = files_by_metadata_table(fixture_table(table))
    assert from_mdt is not None and from_mdt == files_by_listing(fixture_table(table))


def test_the_fixtures_have_metadata_tables_of_both_table_types_and_versions():
    assert len(WITH_FILES_PARTITION) >= 20
    assert any("/mor/" in t for t in WITH_FILES_PARTITION) and any("/cow/" in t for t in WITH_FILES_PARTITION)
    assert any("/v8_" in t for t in WITH_FILES_PARTITION) and any("/v9_" in t for t in WITH_FILES_PARTITION)


def test_the_file_system_view_reads_the_metadata_table_not_the_partitions(fixture_table, monkeypatch):
    meta = MetaClient.open(fixture_table(MOR_TXNS))
    listed_view = meta.fs_view()
    monkeypatch.setattr(meta_client_module, "list_data_files", _no_listing)
    assert MetaClient.open(meta.base_path).fs_view().groups == listed_view.groups


def test_a_table_without_a_metadata_table_is_listed(fixture_table, monkeypatch):
    meta = MetaClient.open(fixture_table("sample_table/mor/avro/v9_txns_simple_nometa"))
    assert files_partition(meta.storage, meta.properties, meta.timeline()) is None
    assert meta.fs_view().file_groups()


def test_a_data_write_not_completed_on_the_data_table_is_left_out(fixture_table, tmp_path):
    # a writer killed after its metadata-table update and before its own commit: its files do not count
    table = copy_of(fixture_table(MOR_TXNS), tmp_path)
    meta = MetaClient.open(table)
    last = last_write(meta)
    before = files_partition(meta.storage, meta.properties, meta.timeline())
    assert any(last.requested_time in name for names in before.values() for name in names)
    (table / meta.properties.timeline_path / last.file_name).unlink()
    meta = MetaClient.open(table)
    assert last.requested_time not in {i.requested_time for i in meta.timeline().completed}
    from_mdt = files_by_metadata_table(table)
    assert from_mdt == files_by_listing(table)
    assert not any(last.requested_time in name for names in from_mdt.values() for name in names)


def test_a_metadata_table_update_that_never_completed_is_left_out(fixture_table, tmp_path):
    # the data table's last commit stands, but the metadata table's deltacommit of it does not: Hudi would
    # not have completed the data commit; the reader still takes only what the metadata table completed
    table = copy_of(fixture_table(MOR_TXNS), tmp_path)
    meta = MetaClient.open(table)
    last = last_write(meta)
    mdt_timeline = table / METADATA_FOLDER / meta.properties.timeline_path
    completed = [f for f in mdt_timeline.iterdir() if f.name.startswith(last.requested_time + "_")]
    assert completed
    before = files_partition(meta.storage, meta.properties, meta.timeline())
    for f in completed:
        f.unlink()
    after = files_partition(meta.storage, meta.properties, MetaClient.open(table).timeline())
    dropped = {name for p in before for name in set(before[p]) - set(after.get(p, {}))}
    assert dropped and all(last.requested_time in name for name in dropped)


def test_a_metadata_table_it_cannot_read_is_listed_around(fixture_table, tmp_path):
    table = copy_of(fixture_table(MOR_TXNS), tmp_path)
    for f in (table / METADATA_FOLDER / "files").glob("*.hfile"):
        f.write_bytes(b"not an hfile")
    meta = MetaClient.open(table)
    with pytest.raises(InvalidTableError):
        files_partition(meta.storage, meta.properties, meta.timeline())
    assert meta.fs_view().groups == MetaClient.open(fixture_table(MOR_TXNS)).fs_view().groups


def last_write(meta: MetaClient) -> Instant:
    return [i for i in meta.timeline().completed if i.action == Action.DELTA_COMMIT][-1]


def copy_of(table: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(table, tmp_path / table.name))


def _no_listing(*_):
    raise AssertionError("the table's partitions were listed although it has a metadata table")


MOR_WITH_MDT_COMPACTION = "sample_table/mor/avro/v9_txns_complex_meta"


def test_log_blocks_follow_one_another_and_a_block_cut_short_ends_the_file(fixture_table):
    log = max((fixture_table(MOR_TXNS) / METADATA_FOLDER / "files").glob(".files-*.log.*"),
              key=lambda f: LogFileName.parse(f.name).sort_key).read_bytes()
    one = list(log_blocks(log, "log"))
    assert len(one) == 1 and one[0].type == BlockType.HFILE_DATA
    assert list(log_blocks(log + log, "log")) == one + one  # a file appended to (Hudi's version 6 logs)
    assert list(log_blocks(log + log[:-20], "log")) == one  # a writer killed while appending its block


def test_a_pending_compaction_of_the_metadata_table_leaves_its_logs_to_the_slice_before(fixture_table, tmp_path):
    table = copy_of(fixture_table(MOR_WITH_MDT_COMPACTION), tmp_path)
    mdt_timeline = table / METADATA_FOLDER / ".hoodie" / "timeline"
    compactions = [f for f in mdt_timeline.iterdir() if f.name.endswith(".commit")]
    assert compactions  # the metadata table compacted: its base file holds the first commits
    for f in compactions:
        f.unlink()  # as if killed before completing: its base file does not count, every log since the last does
    assert files_by_metadata_table(table) == files_by_listing(table)


def test_a_rollback_block_undoes_its_target_read_so_far_and_a_retry_of_it_counts(fixture_table, tmp_path):
    table = copy_of(fixture_table(MOR_TXNS), tmp_path)
    last = max((table / METADATA_FOLDER / "files").glob(".files-*.log.*"),
               key=lambda f: LogFileName.parse(f.name).sort_key)
    block = last.read_bytes()
    target = LogFileName.parse(last.name).instant_time
    before = files_by_metadata_table(table)
    last.write_bytes(block + rollback_block(target))
    undone = files_by_metadata_table(table)
    last.write_bytes(block + rollback_block(target) + block)  # the instant written again after its rollback
    assert files_by_metadata_table(table) == before
    last.unlink()
    assert undone == files_by_metadata_table(table) != before


def rollback_block(target: str) -> bytes:
    """A rollback command block as Hudi frames one (hudi-format.md section 4)."""
    header = {0: "99999999999999999", 1: target, 3: "0"}  # instant, target instant, command: rollback
    entries = b"".join(struct.pack(">ii", k, len(v)) + v.encode() for k, v in header.items())
    body = struct.pack(">ii", 1, BlockType.COMMAND) + struct.pack(">i", len(header)) + entries
    body += struct.pack(">q", 0) + struct.pack(">i", 0)  # no content, no footer
    return MAGIC + struct.pack(">q", len(body) + 8) + body + struct.pack(">q", 6 + 8 + len(body))


def test_a_log_of_a_deltacommit_on_neither_timeline_is_not_guessed_at(fixture_table, tmp_path):
    # a chaos run found logs of archived deltacommits that the metadata table's cleaner had not removed yet:
    # their slice depends on their completion time, which the archived timeline holds (read then, as Java
    # does); where neither timeline has it, the reader refuses rather than guess, and the view lists
    table = copy_of(fixture_table(MOR_WITH_MDT_COMPACTION), tmp_path)
    mdt_timeline = table / METADATA_FOLDER / ".hoodie" / "timeline"
    compaction = min(f.name.split("_")[0] for f in mdt_timeline.iterdir() if f.name.endswith(".commit"))
    older = [f for f in mdt_timeline.iterdir() if f.is_file() and f.name < compaction]
    assert older
    for f in older:
        f.unlink()
    meta = MetaClient.open(table)
    with pytest.raises(InvalidTableError, match="on neither of the metadata table's timelines"):
        files_partition(meta.storage, meta.properties, meta.timeline())
    assert meta.fs_view().groups == MetaClient.open(fixture_table(MOR_WITH_MDT_COMPACTION)).fs_view().groups
