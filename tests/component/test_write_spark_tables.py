"""hudi-ops extends tables that Apache Hudi's Spark writer created, without losing what Spark wrote."""

from __future__ import annotations

import shutil

import hudi
import pyarrow as pa
import pytest

from hudi_ops import HudiTable
from hudi_ops.errors import InvalidTableError
from hudi_ops.format.table_properties import TableProperties
from tests.shared_data import unzip_fixture


def _adopt(path, *, drop_metadata_table: bool = False) -> HudiTable:
    """What an operator does before hudi-ops writes to a Spark table: UTC timeline, no metadata table."""
    if drop_metadata_table:
        shutil.rmtree(path / ".hoodie" / "metadata")
    table = HudiTable.open(path)
    props = table.properties.updated(**{
        "hoodie.table.timeline.timezone": "UTC",
        "hoodie.table.metadata.partitions": None,
        "hoodie.table.metadata.partitions.inflight": None,
    })
    props.store(table.meta.storage, create=False)
    assert TableProperties.load(table.meta.storage).timezone == "UTC"
    return HudiTable.open(path)


def _rs_rows(table: HudiTable, cols: list[str]) -> list[tuple]:
    rows = pa.Table.from_batches(hudi.HudiTable(table.base_path).read()).select(cols).to_pylist()
    return sorted(tuple(r[c] for c in cols) for r in rows)


def test_upsert_into_a_spark_written_cow_table(tmp_path):
    table = _adopt(unzip_fixture("sample_table/cow/v8_simplekeygen_nonhivestyle.zip", tmp_path))
    schema = table.schema()
    assert schema is not None
    current = table.read(columns=list(schema.names))
    alice = current.filter(pa.compute.equal(current["id"], 1))
    bumped = alice.set_column(schema.get_field_index("longField"), "longField",
                              pa.array([alice["longField"][0].as_py() + 1], pa.int64()))
    bumped = bumped.set_column(schema.get_field_index("name"), "name", pa.array(["Alice-2"]))
    result = table.upsert(bumped)
    assert (result.num_updates, result.num_inserts) == (1, 0)
    ours = sorted((r["id"], r["name"], r["isActive"]) for r in table.read().to_pylist())
    assert ours == [(1, "Alice-2", False), (2, "Bob", False), (3, "Carol", True), (4, "Diana", True)]
    assert _rs_rows(table, ["id", "name", "isActive"]) == ours


@pytest.fixture
def trips(tmp_path):
    return _adopt(unzip_fixture("quickstart_trips_table/mor/avro/v8_trips_8i3u1d.zip", tmp_path),
                  drop_metadata_table=True)


def _slice_with_logs(table: HudiTable):
    return next(s for s in table.file_system_view().latest_slices() if s.log_files)


def _one_record_of(table: HudiTable, file_slice) -> pa.Table:
    """A record stored in the slice's base file, with the table's user columns."""
    stored = table.read(read_optimized=True)
    mine = stored.filter(pa.compute.equal(stored["_hoodie_file_name"], file_slice.base_file.name.file_name))
    return mine.select(table.schema().names).slice(0, 1)


def test_updating_a_slice_whose_logs_cannot_be_merged_is_refused(trips):
    before = _rs_rows(trips, ["uuid", "fare"])
    update = _one_record_of(trips, _slice_with_logs(trips))
    with pytest.raises(InvalidTableError, match="log files"):
        trips.upsert(update)
    assert _rs_rows(trips, ["uuid", "fare"]) == before


def test_inserts_never_pack_into_a_slice_with_logs(trips):
    before = _rs_rows(trips, ["uuid", "fare"])
    target = _slice_with_logs(trips)
    new = _one_record_of(trips, target)
    new = new.set_column(new.schema.get_field_index("uuid"), "uuid", pa.array(["new-rider-uuid"]))
    trips.insert(new)
    groups = [s for s in trips.file_system_view().latest_slices() if s.partition_path == target.partition_path]
    assert target.file_id in {s.file_id for s in groups} and len(groups) == 2
    assert _slice_with_logs(trips).file_id == target.file_id  # the logged slice is untouched
    after = _rs_rows(trips, ["uuid", "fare"])
    assert sorted(set(after) - set(before)) == [("new-rider-uuid", new["fare"][0].as_py())]
    assert set(before) <= set(after)  # the log's updates are still there
