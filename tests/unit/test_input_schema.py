"""The input must fit the table as it is: checked before Hudi, which would otherwise change the table's types."""

from __future__ import annotations

import pyarrow as pa
import pytest

from hudi_ops.errors import InvalidInputError
from hudi_ops.spark.jobs.input_schema import check_input_schema, holds
from hudi_ops.spark.jobs.target import TargetTable

TABLE = pa.schema([("trip_id", pa.string()), ("dt", pa.string()), ("ts", pa.int64()), ("fare", pa.float64()),
                   ("tags", pa.list_(pa.string())), ("amount", pa.decimal128(10, 2))])


def target(schema=TABLE):
    return TargetTable("/t", "trips", "COPY_ON_WRITE", ("trip_id",), ("dt",), "ts", schema)


@pytest.mark.parametrize(("table", "given", "ok"), [
    (pa.int64(), pa.int32(), True),  # Avro's promotions: the table's type holds the value unchanged
    (pa.float64(), pa.int64(), True),
    (pa.float64(), pa.float32(), True),
    (pa.string(), pa.large_string(), True),
    (pa.timestamp("us", tz="UTC"), pa.timestamp("ms", tz="UTC"), True),
    (pa.timestamp("us", tz="UTC"), pa.timestamp("us"), False),  # a local time is another kind of value
    (pa.decimal128(12, 2), pa.decimal128(10, 2), True),
    (pa.int64(), pa.null(), True),  # an all-null column
    (pa.int32(), pa.int64(), False),  # narrowing
    (pa.int64(), pa.float64(), False),  # Hudi would turn the table's column into doubles
    (pa.int64(), pa.string(), False),  # ... or into strings
    (pa.string(), pa.int64(), False),
    (pa.decimal128(10, 2), pa.decimal128(10, 3), False),
    (pa.list_(pa.int64()), pa.list_(pa.string()), False),
    (pa.struct([("a", pa.int64())]), pa.struct([("a", pa.int32()), ("b", pa.string())]), True),
    (pa.struct([("a", pa.int64())]), pa.struct([("a", pa.string())]), False),
])
def test_which_types_a_table_column_holds(table, given, ok):
    assert holds(table, given) is ok


def test_new_columns_and_widened_types_pass():
    source = TABLE.set(2, pa.field("ts", pa.int32())).append(pa.field("extra", pa.string()))
    check_input_schema(source, target(), {}, "the source")


@pytest.mark.parametrize(("source", "message"), [
    (TABLE.remove(0), "the source has no record key field 'trip_id' (its columns: dt, ts,"),
    (TABLE.remove(1), "the source has no partition path field 'dt'"),
    (TABLE.remove(2), "the source has no ordering field 'ts'"),
    (TABLE.remove(3), "the source lacks the table's column 'fare' (double); add it to the source"),
    (TABLE.set(2, pa.field("ts", pa.string())),
     "field 'ts' is string in the source but int64 in the table, which cannot hold it"),
])
def test_what_the_table_cannot_take_is_named_with_the_fix(source, message):
    with pytest.raises(InvalidInputError) as caught:
        check_input_schema(source, target(), {}, "the source")
    assert message in str(caught.value)


def test_missing_columns_pass_when_hudi_is_told_to_write_nulls():
    check_input_schema(TABLE.remove(3), target(), {"hoodie.write.set.null.for.missing.columns": "true"}, "src")


def test_a_delete_needs_only_the_keys_and_partitions():
    check_input_schema(pa.schema([("trip_id", pa.string()), ("dt", pa.string())]), target(), {}, "src",
                       keys_only=True)
    with pytest.raises(InvalidInputError, match="no record key field 'trip_id'"):
        check_input_schema(pa.schema([("dt", pa.string())]), target(), {}, "src", keys_only=True)


def test_a_new_table_only_needs_its_key_fields():
    check_input_schema(pa.schema([("trip_id", pa.string()), ("dt", pa.string()), ("ts", pa.int64())]),
                       target(None), {}, "the source")
