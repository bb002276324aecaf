"""What an ingest reads, one module per kind of source, each answering the same three questions without a
JVM: what is new since the table's checkpoint of this source, that work cut into batches within a bound,
and the checkpoint each batch commits with (in the commit's extra metadata, with the data):

- `files`: a landing folder's files, by name (hudi_ops.sources.files);
- `kafka`: a Kafka topic's messages, by offset, with HoodieStreamer's checkpoints (hudi_ops.sources.kafka);
- `debezium`: a database's change log on a Kafka topic, read as `kafka` (hudi_ops.sources.debezium);
- `hudi`: an upstream Hudi table's committed changes, by completion time (hudi_ops.sources.hudi_table).

The Spark side of each kind, its batch read as a DataFrame, is hudi_ops.spark.sources.
"""
