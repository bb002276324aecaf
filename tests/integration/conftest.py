"""One local SparkSession for the whole test session (starting one takes ~9 s)."""

from __future__ import annotations

import logging
import os
import sys

import pytest


@pytest.fixture(scope="session")
def spark():
    # Spark's Python workers must run this interpreter, or they miss pyarrow and hudi_ops
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    from pyspark.sql import SparkSession

    session = (
        SparkSession.builder.master("local[2]")
        .appName("hudi-ops-tests")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.driver.host", "127.0.0.1")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    # py4j logs its shutdown at INFO from an exit hook, after pytest has closed the streams
    logging.getLogger("py4j").setLevel(logging.WARNING)
    yield session
    session.stop()
