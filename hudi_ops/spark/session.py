"""The job's SparkSession: whatever spark-submit configured, else a local one."""

from __future__ import annotations

from typing import Any


def spark_session(app_name: str) -> Any:
    from pyspark import SparkConf
    from pyspark.sql import SparkSession

    builder = SparkSession.builder.appName(app_name)
    if not SparkConf().contains("spark.master"):  # run as `python -m hudi_ops.spark`, not by spark-submit
        builder = builder.master("local[2]")
    return builder.getOrCreate()
