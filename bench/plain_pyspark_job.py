"""A hudi-ops job run the way a plain PySpark application ends: by stopping its session itself.

bench/job_fixed_cost.py's baseline: with Hudi's jars given by `--jars` and the JVM's defaults, this is
a job as Hudi's quick start and PySpark's examples would submit it."""

from __future__ import annotations

import sys

from pyspark import SparkContext
from pyspark.sql import SparkSession

from hudi_ops.spark.__main__ import main

if __name__ == "__main__":
    code = main()
    if SparkContext._active_spark_context is not None:  # the job started Spark: `spark.stop()`, as apps end
        SparkSession.builder.getOrCreate().stop()
    sys.exit(code)
