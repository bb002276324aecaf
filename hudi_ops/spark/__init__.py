"""The spark-submit application: `ingest` and `backfill` jobs writing through the Spark engine."""
