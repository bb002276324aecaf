"""Writes of Spark DataFrames, planned on the executors, against Arrow writes of the local engine."""

from __future__ import annotations

import hudi
import pyarrow as pa
import pytest

from hudi_ops import HudiTable
from hudi_ops.engine.local import LocalEngine
from hudi_ops.engine.spark import SparkEngine
from hudi_ops.errors import InvalidInputError

COLUMNS = ["id", "ts", "city", "fare", "_hoodie_record_key", "_hoodie_partition_path"]


def _batch(ids, ts, city) -> pa.Table:
    return pa.table({
        "id": pa.array(ids, pa.int64()), "ts": pa.array(ts, pa.int64()), "city": pa.array(city, pa.string()),
        "fare": pa.array([float(i) * 1.5 + t for i, t in zip(ids, ts, strict=True)], pa.float64()),
    })


def _rows(table: HudiTable) -> list[tuple]:
    ours = sorted(tuple(r.values()) for r in table.read(columns=COLUMNS).to_pylist())
    theirs = pa.Table.from_batches(hudi.HudiTable(table.base_path).read()).select(COLUMNS).to_pylist()
    assert sorted(tuple(r.values()) for r in theirs) == ours
    return ours


# batches with in-batch duplicates (equal ordering values too: the later row wins), late events,
# keys that move nowhere (a key lives in one partition), deletes of stored and unknown keys
HISTORY = [
    ("bulk_insert", _batch(list(range(40)), [1] * 40, ["sf", "nyc", "la", "sea"] * 10)),
    ("upsert", _batch([1, 1, 5, 5, 9, 40, 41, 41, 2], [5, 5, 0, 3, 2, 1, 1, 2, 1],
                      ["nyc", "nyc", "nyc", "nyc", "nyc", "sf", "la", "la", "la"])),
    ("insert", _batch([100, 101, 102], [1, 1, 1], ["sf", "sf", "chi"])),
    ("delete", _batch([4, 5, 77], [0, 0, 0], ["sf", "nyc", "la"])),
    ("upsert", _batch([6, 7, 8, 103], [9, 0, 9, 1], ["la", "sea", "sf", "chi"])),
]


@pytest.fixture
def no_broadcast(spark):
    """Incoming keys too big to broadcast: the index joins by shuffling both sides."""
    before = spark.conf.get("spark.sql.autoBroadcastJoinThreshold")
    spark.conf.set("spark.sql.autoBroadcastJoinThreshold", "-1")
    yield
    spark.conf.set("spark.sql.autoBroadcastJoinThreshold", before)


@pytest.mark.parametrize("index", ["SIMPLE", "BLOOM", "SIMPLE-shuffled"])
def test_a_dataframe_write_gives_the_table_an_arrow_write_gives(spark, tmp_path, index, request):
    if index.endswith("-shuffled"):
        request.getfixturevalue("no_broadcast")
        index = index.removesuffix("-shuffled")
    # tiny files, so inserts are split over several new file groups and packed into small ones
    options = {"hoodie.index.type": index, "hoodie.parquet.max.file.size": "4000",
               "hoodie.parquet.small.file.limit": "3000", "hoodie.copyonwrite.record.size.estimate": "200"}
    tables = {}
    for name in ("arrow", "dataframe"):
        t = HudiTable.create(tmp_path / name, name="t", record_key="id", partition_fields=["city"], ordering_field="ts")
        for op, b in HISTORY:
            if name == "arrow":
                t.write(b, op, options=options, engine=LocalEngine())
            else:
                t.write(spark.createDataFrame(b.to_pandas()).repartition(3), op, options=options,
                        engine=SparkEngine(spark))
        tables[name] = t
    assert _rows(tables["dataframe"]) == _rows(tables["arrow"])
    ids = {r[0]: (r[1], r[2]) for r in _rows(tables["dataframe"])}
    assert ids[1] == (5, "nyc") and ids[41] == (2, "la") and ids[9] == (2, "nyc")
    assert ids[7] == (1, "sea")  # a late event loses to the stored record
    assert not {4, 5, 77} & set(ids)
    groups = tables["dataframe"].file_system_view().latest_base_files()
    assert len(groups) > 4  # several file groups per partition: the size rules were applied


def test_dataframe_writes_count_what_they_took_in(spark, tmp_path):
    t = HudiTable.create(tmp_path / "t", name="t", record_key="id", partition_fields=["city"], ordering_field="ts")
    engine = SparkEngine(spark)
    first = t.write(spark.createDataFrame(_batch([1, 2, 2], [1, 1, 2], ["sf", "sf", "sf"]).to_pandas()), "upsert",
                    engine=engine)
    assert (first.records, first.num_inserts) == (2, 2)
    second = t.write(spark.createDataFrame(_batch([2, 3], [3, 1], ["sf", "sf"]).to_pandas()), "upsert", engine=engine)
    assert (second.records, second.num_inserts, second.num_updates) == (2, 1, 1)


def test_non_ascii_keys_are_found_by_the_bloom_index(spark, tmp_path):
    t = HudiTable.create(tmp_path / "t", name="t", record_key="k", ordering_field="ts")
    engine = SparkEngine(spark)
    keys = ["zebra", "äpfel", "ápple", "日本"]
    t.write(spark.createDataFrame(pa.table({"k": keys, "ts": [1, 1, 1, 1]}).to_pandas()), "bulk_insert",
            engine=engine)
    again = t.write(spark.createDataFrame(pa.table({"k": keys, "ts": [2, 2, 2, 2]}).to_pandas()), "upsert",
                    options={"hoodie.index.type": "BLOOM"}, engine=engine)
    assert (again.num_updates, again.num_inserts) == (4, 0)
    assert sorted(r["ts"] for r in t.read(columns=["ts"]).to_pylist()) == [2, 2, 2, 2]


def test_bad_values_found_on_the_executors_are_input_errors_and_leave_the_table(spark, tmp_path):
    t = HudiTable.create(tmp_path / "t", name="t", record_key="id", partition_fields=["city"], ordering_field="ts")
    engine = SparkEngine(spark)
    t.write(spark.createDataFrame(_batch([1], [1], ["sf"]).to_pandas()), "upsert", engine=engine)
    before = _rows(t)
    nulls = spark.createDataFrame([(2, None, "sf", 1.0)], "id long, ts long, city string, fare double")
    with pytest.raises(InvalidInputError, match="'ts' is null"):
        t.write(nulls, "upsert", engine=engine)
    no_key = spark.createDataFrame([(None, 3, "sf", 1.0)], "id long, ts long, city string, fare double")
    with pytest.raises(InvalidInputError, match="record key field 'id' is null"):
        t.write(no_key, "upsert", engine=engine)
    assert _rows(t) == before
    assert not t.timeline().pending


def test_the_local_engine_refuses_a_dataframe_with_the_fix(spark, tmp_path):
    t = HudiTable.create(tmp_path / "t", name="t", record_key="id", ordering_field="ts")
    with pytest.raises(InvalidInputError, match="SparkEngine"):
        t.write(spark.createDataFrame(_batch([1], [1], ["sf"]).to_pandas()), "upsert", engine=LocalEngine())
