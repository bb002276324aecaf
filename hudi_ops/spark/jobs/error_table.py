"""A batch's messages that cannot become rows, written to Hudi's error table (hudi_ops.sources.error_table)
before the batch's own commit."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hudi_ops.read.table_overview import CommitStats
from hudi_ops.sources.error_table import COLUMNS, PARTITION_FIELD, RECORD_KEY, ErrorTable
from hudi_ops.spark.jobs import hudi_write
from hudi_ops.spark.jobs.target import resolve_target
from hudi_ops.spark.sources.kafka import RAW


def write_errors(spark: Any, kept: Any, table: ErrorTable, options: Mapping[str, str], *, topic: str,
                 target_table: str, ingest_run: str) -> CommitStats:
    """Upsert the kept messages (hudi_ops.spark.sources.kafka.BadMessages) by their topic, partition and
    offset; `options`: the ingest's, of which the error table keeps its lock and concurrency settings."""
    from pyspark.sql import functions as F

    frame = kept.select(F.lit(topic).alias("topic"), "partition", "offset", F.col("timestamp").alias("kafka_timestamp"),
                        F.col(RAW).alias("value"), "reason", "error", F.lit(target_table).alias("target_table"),
                        F.lit(ingest_run).alias("ingest_run"))
    shared = table.write_options(options)
    target = resolve_target(table.base_path, shared, table_name=table.name, table_type="COPY_ON_WRITE",
                            record_key=",".join(RECORD_KEY), partition_path=PARTITION_FIELD)
    run, write_options = hudi_write.write_options(target, "UPSERT", shared, job="ingest", extra_metadata={})
    return hudi_write.write(spark, frame.select(*COLUMNS), target, write_options, run,
                            f"the error table of topic {topic}").commit
