"""The Spark side: the spark-submit application (`__main__`: the writes `ingest`, `backfill` and the repair
`dedupe` through Hudi's Spark datasource, the table services through Hudi's write client; `jobs/`), the
jars and JVM settings it runs with, and how a task launches and follows it (client or cluster mode)."""
