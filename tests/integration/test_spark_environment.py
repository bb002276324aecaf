"""The installed Spark runs Python UDFs over Arrow.

The Airflow Spark provider pulls `pyspark-client`, which installs into the same `pyspark/` package as
`pyspark`; mismatched releases break Python UDFs. This fails if the pins in pyproject.toml drift.
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc


def test_arrow_udf_runs_on_executors(spark):
    df = spark.createDataFrame([(i, f"k{i}") for i in range(100)], "id long, key string")

    def double_ids(batches):
        for b in batches:
            yield pa.RecordBatch.from_arrays([pc.multiply(b.column(0), 2), b.column(1)], names=["id", "key"])

    out = df.mapInArrow(double_ids, "id long, key string").orderBy("id").collect()
    assert [r.id for r in out] == [2 * i for i in range(100)]
    assert out[5].key == "k5"


def test_pyspark_and_pyspark_client_are_one_release():
    from importlib.metadata import version

    assert version("pyspark") == version("pyspark-client")
