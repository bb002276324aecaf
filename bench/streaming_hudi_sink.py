"""The job a user would otherwise run for a Kafka-fed table: Spark Structured Streaming from the topic
into Hudi's streaming sink (`format("hudi")`, in Hudi's bundle), as Hudi's streaming guide writes it.

`spark-submit streaming_hudi_sink.py BOOTSTRAP TOPIC TABLE CHECKPOINT TRIGGER`: TRIGGER is a number of
seconds (a micro-batch that often, running until killed) or `available-now` (what the topic holds, then
the job ends). Values are JSON objects of the benchmark's trip columns; upserts by `trip_id`, partitioned
by `dt`, ordered by `ts`, COPY_ON_WRITE as hudi-ops' benchmark table is, under the same ZooKeeper lock
options (given as `hoodie.*` key=value arguments after TRIGGER; other key=value arguments are the Kafka
reader's options, such as `maxOffsetsPerTrigger`).
"""

from __future__ import annotations

import sys

from pyspark.sql import SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import DoubleType, LongType, StringType, StructField, StructType

SCHEMA = StructType([StructField("trip_id", StringType()), StructField("dt", StringType()),
                     StructField("ts", LongType()), StructField("fare", DoubleType()),
                     StructField("batch", StringType())])


def main(argv: list[str]) -> None:
    bootstrap, topic, table, checkpoint, trigger, *extra = argv
    given = dict(kv.split("=", 1) for kv in extra)
    options = {"hoodie.table.name": "trips", "hoodie.datasource.write.recordkey.field": "trip_id",
               "hoodie.datasource.write.partitionpath.field": "dt",
               "hoodie.datasource.write.precombine.field": "ts",
               "hoodie.datasource.write.table.type": "COPY_ON_WRITE",
               "hoodie.datasource.write.operation": "upsert",
               # the sink refuses a multi-writer table (the lock's options) without a name for its checkpoint
               "hoodie.datasource.write.streaming.checkpoint.identifier": "streaming-job",
               **{k: v for k, v in given.items() if k.startswith("hoodie.")}}
    spark = SparkSession.builder.getOrCreate()
    rows = (spark.readStream.format("kafka").option("kafka.bootstrap.servers", bootstrap)
            .option("subscribe", topic).option("startingOffsets", "earliest")
            .options(**{k: v for k, v in given.items() if not k.startswith("hoodie.")}).load()
            .select(F.from_json(F.col("value").cast("string"), SCHEMA).alias("v")).select("v.*"))
    writer = rows.writeStream.format("hudi").options(**options).option("checkpointLocation", checkpoint) \
        .outputMode("append")
    writer = writer.trigger(availableNow=True) if trigger == "available-now" else \
        writer.trigger(processingTime=f"{float(trigger):g} seconds")
    writer.start(table).awaitTermination()


if __name__ == "__main__":
    main(sys.argv[1:])
