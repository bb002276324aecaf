"""The spark-submit application: `ingest` and `backfill` jobs that write through Apache Hudi's Spark writer."""
