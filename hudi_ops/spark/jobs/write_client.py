"""Hudi's Java write client (`SparkRDDWriteClient`) on an existing table, through py4j.

The table services are Hudi's own: the jobs call the client the way Hudi's utilities
(HoodieCompactor, HoodieClusteringJob, HoodieCleaner) do, with the table's name from its
hoodie.properties and the job's `hoodie.*` options, lock options included, so every service takes
the table's lock exactly as Hudi's writers do.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, NoReturn

from hudi_ops.format.meta_client import MetaClient
from hudi_ops.options.keys import WriteConfig
from hudi_ops.spark.java_errors import JavaFailure, JobContext, hudi_ops_error
from hudi_ops.spark.jobs.target import RECORD_KEY, TABLE_CONFIG_TYPE, TABLE_NAME
from hudi_ops.spark.session import session_options

#: the writer schema; Hudi's utilities set it from the table's latest commit (clustering needs it)
AVRO_SCHEMA = WriteConfig.AVRO_SCHEMA.name


@dataclass(frozen=True)
class WriteClient:
    """The client and what the services need beside it."""

    java: Any  # org.apache.hudi.client.SparkRDDWriteClient
    config: Any  # its HoodieWriteConfig
    context: Any  # its HoodieSparkEngineContext
    jvm: Any
    meta: MetaClient

    def none(self) -> Any:
        """Hudi's `Option.empty()`."""
        return self.jvm.org.apache.hudi.common.util.Option.empty()

    def table(self) -> Any:
        """Hudi's `HoodieSparkTable` for the client's config, on a freshly loaded timeline."""
        return self.jvm.org.apache.hudi.table.HoodieSparkTable.create(self.config, self.context)


@contextmanager
def write_client(spark: Any, meta: MetaClient, options: Mapping[str, str]) -> Iterator[WriteClient]:
    """A client for `meta`'s table; Hudi's failures inside the block become hudi-ops errors."""
    jvm = spark._jvm
    props = jvm.java.util.Properties()
    # and from the table's properties what the client's own config checks need: a bucket index hashes
    # the record key (without it Hudi 1.1.1's check fails with a NullPointerException), and non-blocking
    # concurrency control requires MERGE_ON_READ (the config's type is COPY_ON_WRITE unless set)
    table = {TABLE_NAME: meta.properties.table_name, AVRO_SCHEMA: meta.avro_schema() or "",
             TABLE_CONFIG_TYPE: meta.properties.table_type}
    if meta.properties.record_key_fields:
        table[RECORD_KEY] = ",".join(meta.properties.record_key_fields)
    for key, value in {**table, **session_options(spark, options)}.items():
        props.setProperty(key, str(value))
    context = JobContext(meta.base_path)
    try:
        config = jvm.org.apache.hudi.config.HoodieWriteConfig.newBuilder() \
            .withPath(meta.base_path).withProps(props).build()
        engine = jvm.org.apache.hudi.client.common.HoodieSparkEngineContext(spark.sparkContext._jsc)
        client = jvm.org.apache.hudi.client.SparkRDDWriteClient(engine, config)
    except Exception as e:
        _raise_converted(e, context)
    try:
        yield WriteClient(client, config, engine, jvm, meta)
    except Exception as e:
        _raise_converted(e, context)
    finally:
        client.close()


def _raise_converted(error: Exception, context: JobContext) -> NoReturn:
    failure = JavaFailure.of(error)
    if failure is None:
        raise error
    raise hudi_ops_error(failure, context) from error
