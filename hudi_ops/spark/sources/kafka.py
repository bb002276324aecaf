"""A Kafka batch (hudi_ops.sources.kafka) as a Spark DataFrame: Spark's batch Kafka reader over the
batch's exact offset range, each message's value a JSON object whose fields are the row's columns.

Tombstones (a null value) carry no row and are skipped. A value that is not a JSON object fails the run
naming its topic, partition and offset, before anything is written.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from hudi_ops.errors import InvalidInputError
from hudi_ops.sources.kafka import CLIENT_PREFIX, KafkaBatch

_CORRUPT = "_corrupt_record"


def read_batch(spark: Any, batch: KafkaBatch, client: Mapping[str, str]) -> Any:
    """The batch's JSON objects as rows."""
    return parsed_values(spark, messages(spark, batch, client), batch.end.topic).select("v.*")


def messages(spark: Any, batch: KafkaBatch, client: Mapping[str, str]) -> Any:
    """The batch's messages with a value: `partition`, `offset` and the value as text, `json`."""
    from pyspark.sql import functions as F

    reader = spark.read.format("kafka")
    for key, value in client.items():
        reader = reader.option(CLIENT_PREFIX + key, value)
    frame = (reader.option("assign", _partitions_json(batch))
             .option("startingOffsets", batch.start.spark_json())
             .option("endingOffsets", batch.end.spark_json())
             .option("failOnDataLoss", "true")  # the range was checked against the topic's; a gap is an error
             .load())
    return frame.where(F.col("value").isNotNull()).select(
        "partition", "offset", F.col("value").cast("string").alias("json"))


def parsed_values(spark: Any, values: Any, topic: str, shape: Callable[[Any], Any] | None = None) -> Any:
    """`values` with each JSON object parsed as `v`, by the schema Spark infers from them (`shape` makes
    it the one to parse with); a value that is not a JSON object fails the run naming its offset."""
    from pyspark.sql import DataFrame
    from pyspark.sql import functions as F
    from pyspark.sql.types import StringType, StructField, StructType

    as_strings = values.select("json")._jdf.__getattr__("as")(spark._jvm.org.apache.spark.sql.Encoders.STRING())
    inferred = DataFrame(spark._jsparkSession.read().json(as_strings), spark).schema
    columns = StructType([f for f in inferred.fields if f.name != _CORRUPT])
    if not columns.fields:
        refuse_first_bad(values, topic)
    if shape is not None:
        columns = shape(columns)
    schema = StructType([*columns.fields, StructField(_CORRUPT, StringType())])
    parsed = values.select("partition", "offset", "json",
                           F.from_json("json", schema, {"columnNameOfCorruptRecord": _CORRUPT}).alias("v"))
    refuse_first_bad(parsed.where(F.col(f"v.{_CORRUPT}").isNotNull() | F.col("v").isNull()), topic)
    return parsed.withColumn("v", F.col("v").dropFields(_CORRUPT))


def refuse_first_bad(bad: Any, topic: str, why: str = "is not a JSON object") -> None:
    """Fail the run naming the first of the `bad` messages (`partition`, `offset`, `json`), if any."""
    first = bad.orderBy("partition", "offset").select("partition", "offset", "json").limit(1).collect()
    if first:
        partition, offset, text = first[0]
        raise InvalidInputError(
            f"the message at topic {topic} partition {partition} offset {offset} {why} ({text[:200]!r}); nothing "
            "was written or skipped, and the ingest stops at it until it can be read")


def _partitions_json(batch: KafkaBatch) -> str:
    import json

    return json.dumps({batch.end.topic: [p for p, _ in batch.end.offsets]})
