"""The Spark engine: writes planned and run on Spark executors.

A DataFrame is planned distributed (`spark_write`): keys, precombine, index lookup and the write
handles run on executors, and only counts and statuses reach the driver. An Arrow table, which is
on the driver already, is planned there and its per-file-group handles run on executors. Tasks and
results travel pickled, so executors need only hudi_ops and pyarrow in their Python.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, TypeVar

import pyarrow as pa

from hudi_ops.client.handles import WriteStatus
from hudi_ops.client.write_job import WriteJob
from hudi_ops.engine.spark_errors import translate_spark_error

T = TypeVar("T")
R = TypeVar("R")


class SparkEngine:
    name = "spark"

    def __init__(self, spark: Any) -> None:
        self.spark = spark

    def map(self, fn: Callable[[T], R], items: Sequence[T]) -> list[R]:
        if not items:
            return []
        with _spark_errors():
            rdd = self.spark.sparkContext.parallelize(list(items), numSlices=len(items))
            return rdd.map(fn).collect()

    def input_schema(self, data: Any) -> pa.Schema:
        from pyspark.sql.pandas.types import to_arrow_schema

        return to_arrow_schema(data.schema, timezone=self.spark.conf.get("spark.sql.session.timeZone"))

    def write_dataset(self, job: WriteJob, data: Any) -> list[WriteStatus]:
        from hudi_ops.engine.spark_write import write_dataframe

        with _spark_errors():
            return write_dataframe(self.spark, job, data)


@contextmanager
def _spark_errors() -> Iterator[None]:
    try:
        yield
    except Exception as e:
        translated = translate_spark_error(e)
        if translated is None:
            raise
        raise translated from e
