"""What an ingest reads, one module per kind of source, each answering the same questions without a JVM:
what is new since the table's checkpoint of this source, that work in commits within a bound (a files
or Kafka ingest; an upstream table's changes are one commit), and the checkpoint each commit records in
its extra metadata, with the data:

- `files`: a landing folder's files, by name (hudi_ops.sources.files);
- `kafka`: a Kafka topic's messages, by offset, with HoodieStreamer's checkpoints (hudi_ops.sources.kafka);
- `debezium`: a database's change log on a Kafka topic, read as `kafka` (hudi_ops.sources.debezium);
- `hudi`: an upstream Hudi table's committed changes, by completion time (hudi_ops.sources.hudi_table).

The Spark side of each kind, its batch read as a DataFrame, is hudi_ops.spark.sources.
"""
