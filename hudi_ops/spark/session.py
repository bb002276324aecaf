"""The job's SparkSession, with Apache Hudi on the classpath and the session settings Hudi requires."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from hudi_ops.errors import ConfigError
from hudi_ops.options.keys import WriteConfig
from hudi_ops.spark import driver_jvm
from hudi_ops.spark.hudi_bundle import JARS_ENV
from hudi_ops.spark.hudi_java import with_hudi_ops_classes
from hudi_ops.spark.launch import HUDI_SESSION_CONF, LOOPBACK_CONF, job_launch

_HUDI_DATASOURCE = "org.apache.hudi.DefaultSource"
#: Initialised before anything touches the metadata table. Hudi 1.2.0's metadata-table appends take a
#: fast path only when the write schema is the very object this class interned when it was loaded
#: (`HoodieMetadataPayload.getInsertValue`), but its write handles intern a parsed copy in another
#: cache; in a JVM whose first metadata-table compaction parsed the schema before the class was
#: loaded, every later append fails (`ArrayIndexOutOfBoundsException`, apache/hudi#19559). Loading it
#: first fixes the driver's JVM, which is the executors' in local mode (docs/versions.md).
_METADATA_PAYLOAD = "org.apache.hudi.metadata.HoodieMetadataPayload"
EMBEDDED_TIMELINE_SERVER = WriteConfig.EMBEDDED_TIMELINE_SERVER.name


def session_builder(app_name: str, *, master: str = "local[2]") -> Any:
    """A builder for a Hudi-ready session. Under spark-submit its `--master`, `--name`, `--jars` and
    `--conf` stand; run as `python -m hudi_ops.spark` there are none, so the session is local with
    Hudi's jars."""
    from pyspark import SparkConf, SparkContext
    from pyspark.sql import SparkSession

    builder = SparkSession.builder
    if "PYSPARK_GATEWAY_PORT" in os.environ:  # spark-submit started this driver and its JVM
        SparkContext._ensure_initialized()  # joins that JVM, whose settings SparkConf() then reads
        submitted = SparkConf()
        for key, value in HUDI_SESSION_CONF.items():  # a spark-submit of the user's own, without them
            if not submitted.contains(key):
                builder = builder.config(key, value)
    else:  # local mode, launched here: nothing needs more than loopback
        submitted = SparkConf(loadDefaults=False)
        launch = job_launch(LOOPBACK_CONF)
        builder = builder.master(master).config("spark.jars", ",".join(launch.jars))
        for key, value in launch.conf.items():
            builder = builder.config(key, value)
    if not submitted.contains("spark.app.name"):
        builder = builder.appName(app_name)
    return builder


def session_options(spark: Any, options: Mapping[str, str]) -> dict[str, str]:
    """`options` as this session's Hudi runs them. In local mode the executors live in the driver:
    Hudi's timeline server for them would only open a port on every interface, so it stays off unless
    the user's options ask for it. A class of Hudi's that hudi-ops replaces is swapped for hudi-ops'
    own when Hudi can load it (hudi_ops.spark.hudi_java). Hudi's inline catalog sync stays off: the job
    syncs after its commit (hudi_ops.spark.jobs.meta_sync)."""
    from hudi_ops.spark.jobs.meta_sync import writer_options

    chosen = with_hudi_ops_classes(spark, writer_options(options))
    if driver_jvm.is_local(spark.sparkContext.master) and EMBEDDED_TIMELINE_SERVER not in chosen:
        chosen[EMBEDDED_TIMELINE_SERVER] = "false"
    return chosen


def spark_session(app_name: str) -> Any:
    session = session_builder(app_name).getOrCreate()
    require_hudi(session)
    return session


def require_hudi(session: Any) -> None:
    """Fail with the fix when Hudi's classes are not on the session's classpath (a spark-submit without --jars)."""
    from py4j.protocol import Py4JJavaError

    jvm = session.sparkContext._jvm
    loader = jvm.java.lang.Thread.currentThread().getContextClassLoader()
    try:
        loader.loadClass(_HUDI_DATASOURCE)
    except Py4JJavaError:
        raise ConfigError(
            f"Apache Hudi is not on this Spark session's classpath ({_HUDI_DATASOURCE} is missing): pass Hudi's "
            f"Spark bundle with --jars (`python -m hudi_ops.jars hudi` prints them; {JARS_ENV} overrides them)"
        ) from None
    jvm.java.lang.Class.forName(_METADATA_PAYLOAD, True, loader)
