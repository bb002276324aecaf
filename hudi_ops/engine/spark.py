"""The Spark engine: write tasks run on Spark executors, one task per file group.

Planning (keys, precombine, index, partitioning) stays on the driver, as with the local engine;
the per-file-group handles, which read, merge and write the parquet files, run on executors.
Tasks and results travel pickled (Arrow tables pickle efficiently), so executors need only
hudi_ops and pyarrow in their Python.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar

T = TypeVar("T")
R = TypeVar("R")


class SparkEngine:
    name = "spark"

    def __init__(self, spark: Any) -> None:
        self.spark = spark

    def map(self, fn: Callable[[T], R], items: Sequence[T]) -> list[R]:
        if not items:
            return []
        rdd = self.spark.sparkContext.parallelize(list(items), numSlices=len(items))
        return rdd.map(fn).collect()
