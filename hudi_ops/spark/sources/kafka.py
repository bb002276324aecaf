"""A Kafka batch (hudi_ops.sources.kafka) as a Spark DataFrame: Spark's batch Kafka reader over the
batch's exact offset range, each message's value a JSON object whose fields are the row's columns (Avro
values: hudi_ops.spark.sources.kafka_avro, on the same messages and BadMessages).

Tombstones (a null value) carry no row and are skipped. A value that is not a JSON object fails the run
naming its topic, partition and offset, before anything is written; with Hudi's error table on, it is set
aside for that table (hudi_ops.sources.error_table) and the rest are read.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any

from hudi_ops.errors import InvalidInputError
from hudi_ops.format.meta_fields import META_COLUMNS
from hudi_ops.sources.error_table import NOT_A_ROW
from hudi_ops.sources.kafka import CLIENT_PREFIX, KafkaBatch

_LOG = logging.getLogger(__name__)
_CORRUPT = "_corrupt_record"
#: a message's value as text, as the error table keeps it: JSON as it is, binary (Avro) in base64
RAW = "raw"


class BadMessages:
    """A batch's messages that cannot become rows. The first fails the run naming its place (the default);
    with Hudi's error table on (`keep`), each is kept for it with the reason, and the others go on.

    Looking for them reads the batch before its write does (and inferring its schema, before that): the
    frames read more than once are held (persisted, memory then disk) until `release()`, after the batch's
    write, so that the topic is read, and each value parsed, once for all of them."""

    def __init__(self, topic: str, *, keep: bool, binary: bool = False) -> None:
        """`binary`: the values are bytes (Avro), RAW their base64."""
        self.topic, self.keep, self.binary = topic, keep, binary
        self._kept: list[Any] = []
        self._held: list[Any] = []

    def hold(self, frame: Any) -> Any:
        """`frame`, persisted until `release()`."""
        from pyspark import StorageLevel

        self._held.append(frame.persist(StorageLevel.MEMORY_AND_DISK))
        return frame

    def release(self) -> None:
        """Unpersist the held frames; a failure to (Spark gone) is logged, never raised over the batch's."""
        for frame in self._held:
            try:
                frame.unpersist()
            except Exception as e:  # Py4J's errors, when the JVM is already gone
                _LOG.warning("could not unpersist a batch's frame: %s", e)
        self._held.clear()

    def set_aside(self, frame: Any, bad: Any, why: str, reason: str = NOT_A_ROW) -> Any:
        """`frame` (messages: `partition`, `offset`, `timestamp`, RAW, ...) without those where the
        column `bad` holds; they fail the run, or are kept saying the message `why`."""
        from pyspark.sql import functions as F

        bad = F.coalesce(bad, F.lit(False))
        frame = self.hold(frame)  # read by the look for bad messages, then by the write (and the error table's)
        if not self.keep:
            _refuse_first(frame.where(bad), self.topic, why, binary=self.binary)
            return frame
        self._kept.append(frame.where(bad).select("partition", "offset", "timestamp", RAW,
                                                  F.lit(reason).alias("reason"),
                                                  F.lit(f"the message {why}").alias("error")))
        return frame.where(~bad)

    def kept(self) -> Any | None:
        """The messages kept for the error table, as one frame; None when none was set aside."""
        import functools

        return functools.reduce(lambda a, b: a.unionByName(b), self._kept) if self._kept else None


def read_batch(spark: Any, batch: KafkaBatch, client: Mapping[str, str], known: Any | None,
               bad: BadMessages) -> Any | None:
    """The batch's JSON objects as rows, their columns typed as the table's (`known`, a Spark schema) where
    it has them; None when the batch holds no value (tombstones only) or none that can be read."""
    parsed = parsed_values(spark, messages(spark, batch, client), bad,
                           lambda inferred: with_known_types(inferred, known))
    return None if parsed is None else parsed.select("v.*")


def with_known_types(inferred: Any, known: Any | None) -> Any:
    """The table's columns with its types (a field null in every message of a batch is read as text, one
    missing from all of them not at all), then the batch's new ones."""
    from pyspark.sql.types import StructType

    if known is None:
        return inferred
    return StructType([*known.fields, *(f for f in inferred.fields if f.name not in known.names)])


def table_columns(target: Any) -> Any | None:
    """The table's data columns as a Spark schema (Hudi's own columns left out); None for a new table."""
    from pyspark.sql.pandas.types import from_arrow_type
    from pyspark.sql.types import StructField, StructType

    if target.schema is None:
        return None
    fields = []
    for f in target.schema:
        if f.name in META_COLUMNS:
            continue
        try:
            fields.append(StructField(f.name, from_arrow_type(f.type)))
        except (TypeError, ValueError):
            continue  # a type Spark's Arrow conversion lacks: the batch's own reading of it stands
    return StructType(fields)


def messages(spark: Any, batch: KafkaBatch, client: Mapping[str, str]) -> Any:
    """The batch's messages with a value: `partition`, `offset`, `timestamp` and the value as text, RAW."""
    from pyspark.sql import functions as F

    return raw_messages(spark, batch, client).select("partition", "offset", "timestamp",
                                                     F.col("value").cast("string").alias(RAW))


def raw_messages(spark: Any, batch: KafkaBatch, client: Mapping[str, str]) -> Any:
    """The batch's messages with a value: `partition`, `offset`, `timestamp` and `value` (bytes)."""
    from pyspark.sql import functions as F

    reader = spark.read.format("kafka")
    for key, value in client.items():
        reader = reader.option(CLIENT_PREFIX + key, value)
    frame = (reader.option("assign", _partitions_json(batch))
             .option("startingOffsets", batch.start.spark_json())
             .option("endingOffsets", batch.end.spark_json())
             .option("failOnDataLoss", "true")  # the range was checked against the topic's; a gap is an error
             .load())
    return frame.where(F.col("value").isNotNull()).select("partition", "offset", "timestamp", "value")


def parsed_values(spark: Any, values: Any, bad: BadMessages, shape: Callable[[Any], Any] | None = None) -> Any | None:
    """`values` with each JSON object parsed as `v`, by the schema Spark infers from them (`shape` makes
    it the one to parse with); None when there is no value, or none is a JSON object. A value that is not
    a JSON object goes to `bad`."""
    from pyspark.sql import DataFrame
    from pyspark.sql import functions as F
    from pyspark.sql.types import StringType, StructField, StructType

    values = bad.hold(values)  # read by the schema's inference, then parsed
    as_strings = values.select(RAW)._jdf.__getattr__("as")(spark._jvm.org.apache.spark.sql.Encoders.STRING())
    inferred = DataFrame(spark._jsparkSession.read().json(as_strings), spark).schema
    columns = StructType([f for f in inferred.fields if f.name != _CORRUPT])
    if not columns.fields:
        bad.set_aside(values, F.lit(True), _NOT_AN_OBJECT)
        return None
    if shape is not None:
        columns = shape(columns)
    schema = StructType([*columns.fields, StructField(_CORRUPT, StringType())])
    parsed = values.select("partition", "offset", "timestamp", RAW,
                           F.from_json(RAW, schema, {"columnNameOfCorruptRecord": _CORRUPT}).alias("v"))
    parsed = bad.set_aside(parsed, F.col(f"v.{_CORRUPT}").isNotNull() | F.col("v").isNull(), _NOT_AN_OBJECT)
    return parsed.withColumn("v", F.col("v").dropFields(_CORRUPT))


_NOT_AN_OBJECT = "is not a JSON object of the table's columns"


def _refuse_first(bad: Any, topic: str, why: str, *, binary: bool) -> None:
    """Fail the run naming the first of the `bad` messages (`partition`, `offset`, RAW), if any; the
    message's content stays out of the error (and so out of logs): it may be anyone's data."""
    from pyspark.sql import functions as F

    size = F.length(F.unbase64(RAW)) if binary else F.octet_length(RAW)
    first = bad.orderBy("partition", "offset").select("partition", "offset", size).limit(1).collect()
    if first:
        partition, offset, length = first[0]
        raise InvalidInputError(
            f"the message at topic {topic} partition {partition} offset {offset} ({length} bytes) {why}; its "
            "batch was not written and nothing was skipped: the ingest stops at it until it can be read, or turn "
            "on Hudi's error table (hoodie.errortable.enable=true, hoodie.errortable.base.path=...) to set such "
            "messages aside there")


def _partitions_json(batch: KafkaBatch) -> str:
    import json

    return json.dumps({batch.end.topic: [p for p, _ in batch.end.offsets]})
