"""One local Hudi-ready SparkSession for the whole test session (starting one takes ~9 s)."""

from __future__ import annotations

import logging
import os
import sys

import pytest

from hudi_ops.spark.session import LOOPBACK_CONF

#: loopback only, no UI: for the shared session and every spark-submit the tests start
SPARK_TEST_CONF = {"spark.ui.enabled": "false", **LOOPBACK_CONF, "spark.sql.shuffle.partitions": "2"}


@pytest.fixture(scope="session")
def spark():
    # Spark's Python workers must run this interpreter, or they miss pyarrow and hudi_ops
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    from hudi_ops.spark.session import require_hudi, session_builder

    builder = session_builder("hudi-ops-tests", master="local[2]")
    for key, value in SPARK_TEST_CONF.items():
        builder = builder.config(key, value)
    session = builder.getOrCreate()
    require_hudi(session)
    session.sparkContext.setLogLevel("ERROR")
    # py4j logs its shutdown at INFO from an exit hook, after pytest has closed the streams
    logging.getLogger("py4j").setLevel(logging.WARNING)
    yield session
    session.stop()
