"""A Kafka batch (hudi_ops.sources.kafka) as a Spark DataFrame: Spark's batch Kafka reader over the
batch's exact offset range, each message's value a JSON object whose fields are the row's columns.

Tombstones (a null value) carry no row and are skipped. A value that is not a JSON object fails the run
naming its topic, partition and offset, before anything is written.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hudi_ops.errors import InvalidInputError
from hudi_ops.sources.kafka import CLIENT_PREFIX, KafkaBatch

_CORRUPT = "_corrupt_record"


def read_batch(spark: Any, batch: KafkaBatch, client: Mapping[str, str]) -> Any:
    from pyspark.sql import DataFrame
    from pyspark.sql import functions as F
    from pyspark.sql.types import StringType, StructField, StructType

    topic = batch.end.topic
    reader = spark.read.format("kafka")
    for key, value in client.items():
        reader = reader.option(CLIENT_PREFIX + key, value)
    messages = (reader.option("assign", _partitions_json(batch))
                .option("startingOffsets", batch.start.spark_json())
                .option("endingOffsets", batch.end.spark_json())
                .option("failOnDataLoss", "true")  # the range was checked against the topic's; a gap is an error
                .load())
    values = messages.where(F.col("value").isNotNull()).select(
        "partition", "offset", F.col("value").cast("string").alias("json"))
    as_strings = values.select("json")._jdf.__getattr__("as")(spark._jvm.org.apache.spark.sql.Encoders.STRING())
    inferred = DataFrame(spark._jsparkSession.read().json(as_strings), spark).schema
    columns = [f for f in inferred.fields if f.name != _CORRUPT]
    if not columns:
        _refuse_first_bad(values.select("partition", "offset", "json"), topic)
    schema = StructType([*columns, StructField(_CORRUPT, StringType())])
    parsed = values.select("partition", "offset", "json",
                           F.from_json("json", schema, {"columnNameOfCorruptRecord": _CORRUPT}).alias("v"))
    _refuse_first_bad(parsed.where(F.col(f"v.{_CORRUPT}").isNotNull() | F.col("v").isNull()), topic)
    return parsed.select("v.*").drop(_CORRUPT)


def _refuse_first_bad(bad: Any, topic: str) -> None:
    first = bad.orderBy("partition", "offset").select("partition", "offset", "json").limit(1).collect()
    if first:
        partition, offset, text = first[0]
        raise InvalidInputError(
            f"the message at topic {topic} partition {partition} offset {offset} is not a JSON object "
            f"({text[:200]!r}); nothing was written or skipped, and the ingest stops at it: the producer must write "
            "JSON objects")


def _partitions_json(batch: KafkaBatch) -> str:
    import json

    return json.dumps({batch.end.topic: [p for p, _ in batch.end.offsets]})
