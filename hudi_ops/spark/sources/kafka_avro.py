"""A Kafka batch whose values are Avro records of one schema (`--kafka-value-format avro`, or
`confluent_avro` for Confluent's schema-registry framing) as a Spark DataFrame: Spark's `from_avro`
(spark-avro) over the batch's exact offset range, the record's fields as the row's columns.

Avro binary carries no schema: the values are decoded with the one the ingest is given (HoodieStreamer's
file-based schema provider's file, hudi_ops.sources.kafka.read_value_schema), which must be the
producers'. With Confluent's framing the schema id after the zero byte is not looked up (Confluent's registry client is
not served here): every value is decoded with the given schema. A value that cannot be decoded, or lacks
the framing, fails the run naming its topic, partition and offset; with Hudi's error table on it lands
there in base64 (Hudi's AVRO_DESERIALIZATION_FAILURE) and the rest are read.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

from hudi_ops.sources.error_table import NOT_AN_AVRO_RECORD
from hudi_ops.sources.kafka import KafkaBatch
from hudi_ops.spark.sources.kafka import RAW, BadMessages, raw_messages

#: Confluent's wire format: a zero byte, a 4-byte schema id, then the Avro binary
_CONFLUENT_HEADER = 5


def read_avro_batch(spark: Any, batch: KafkaBatch, client: Mapping[str, str], schema: str, *, confluent: bool,
                    bad: BadMessages) -> Any | None:
    """The batch's Avro records (`schema`, an Avro schema's JSON) as rows; None when it holds no value
    (tombstones only) or none that can be decoded."""
    from pyspark.sql import functions as F
    from pyspark.sql.avro.functions import from_avro

    frame = raw_messages(spark, batch, client).withColumn(RAW, F.base64("value"))
    if confluent:
        framed = (F.length("value") > _CONFLUENT_HEADER) & (F.substring("value", 1, 1) == F.unhex(F.lit("00")))
        frame = bad.set_aside(frame, ~framed, "does not begin with Confluent's schema-registry framing (a zero byte, "
                              "then a 4-byte schema id)", NOT_AN_AVRO_RECORD)
        frame = frame.withColumn("value", F.expr(f"substring(value, {_CONFLUENT_HEADER + 1})"))
    # PERMISSIVE: a value that does not decode is a record of nulls (Spark 3.5's from_avro), not a failed job;
    # a record of nulls has no key, so it cannot be a row either
    decoded = frame.withColumn("v", from_avro("value", schema, {"mode": "PERMISSIVE"}))
    fields = decoded.schema["v"].dataType.fieldNames()
    no_field = functools.reduce(lambda a, b: a & b, (F.col(f"v.{f}").isNull() for f in fields), F.lit(True))
    decoded = bad.set_aside(decoded, F.col("v").isNull() | no_field, "is not an Avro record of the ingest's schema "
                            "(or one with no field set)", NOT_AN_AVRO_RECORD)
    rows = decoded.select("v.*")
    return None if rows.isEmpty() else rows
