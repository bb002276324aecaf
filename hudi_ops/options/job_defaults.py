"""hudi-ops' defaults for a job's `hoodie.*` options, and the one resolver every job's options go through
(the order of precedence: hudi_ops.options). The caller merges the tables config and the job's flags into
`options`; `resolve_job_options` puts hudi-ops' defaults under them, and Hudi's writer and client apply
Hudi's defaults and the table's properties. Resolving twice changes nothing, so the operator resolves (its
`--props` file and its check for work see what the job will run) and the job resolves again, for a
spark-submit of its own.
"""

from __future__ import annotations

from collections.abc import Mapping

from hudi_ops.options.config_property import HoodieConfig
from hudi_ops.options.keys import (
    ClusteringConfig,
    CompactionConfig,
    FailedWritesConfig,
    HeartbeatConfig,
    IndexConfig,
    LockConfig,
    MetaSyncConfig,
    MetricsConfig,
)
from hudi_ops.options.occ import (
    LOCK_IMPLIES,
    PREFER_WRITER,
    has_zookeeper_lock,
)

#: Hudi's lock manager retries a lock it did not get 50 more times, 5 s apart, each try waiting
#: `hoodie.write.lock.wait_time_ms`: almost an hour before a job fails. Under Airflow the task's
#: retries (with backoff, and visible) do that job, so the wait is one try:
#: `hoodie.write.lock.wait_time_ms` is how long a writer waits before it exits 4.
LOCK_WAIT = {LockConfig.CLIENT_NUM_RETRIES.name: "0"}
#: Ingestion first: Hudi's default refuses a write that updates a file group a pending clustering plan
#: rewrites, so a table service held writers back. Allowed, the update goes to the file group as it
#: is, and the clustering checks at its commit (PreferWriter: Hudi 1.1 runs that check for clustering
#: and log compaction, not for compaction) for writes to its file groups since it was planned; it
#: yields, and hudi-ops withdraws its plan (hudi_ops.spark.jobs.plan_execution) for the next tick to
#: plan again. A write under a pending compaction plan was never refused: it goes to the next slice.
#: On Hudi 1.1.1 the jobs run hudi-ops' fix of that check (hudi_ops.spark.hudi_java). A bucket index
#: keeps Hudi's own choices: the conflict check it infers, by bucket (two writers' first files of one
#: bucket conflict), and its own clustering update strategy.
INGESTION_FIRST = {
    ClusteringConfig.UPDATES_STRATEGY.name:
        "org.apache.hudi.client.clustering.update.strategy.SparkAllowUpdateStrategy",
    LockConfig.CONFLICT_RESOLUTION_STRATEGY.name: PREFER_WRITER,
}
#: A backfill beside other writers puts its inserts into file groups of its own instead of filling the
#: partition's small files (Hudi's default, under 100 MB): those are the file groups the ingest writes
#: into, and two writers' inserts into one small file group are a write conflict for one of them. The
#: clustering service later merges the backfill's smaller files.
BACKFILL_APART = {CompactionConfig.PARQUET_SMALL_FILE_LIMIT.name: "0"}
#: A table without a lock has one writer, whose failed writes Hudi rolls back at the next write (EAGER)
#: by default, keeping no heartbeat. hudi-ops keeps Hudi's heartbeats there too (LAZY: a later clean or
#: rollback-failed rolls a failed write back once its heartbeat expired), so that a second attempt of a
#: batch tells the first, still at work, from a dead one (hudi_ops.spark.jobs.batch_fence). A failed
#: attempt's heartbeat looks alive until it expires, and its retry waits that long: beats every 15 s
#: (Hudi's 60) let the retry after Airflow's second backoff through. The writers alone: a table without
#: a lock may have writers outside hudi-ops (Hudi's EAGER default, no heartbeats), whose commits in
#: flight a LAZY clean of hudi-ops' would take for failed ones.
SINGLE_WRITER_HEARTBEATS = {FailedWritesConfig.POLICY.name: "LAZY", HeartbeatConfig.INTERVAL_MS.name: "15000"}
WRITERS = ("ingest", "backfill", "dedupe")
#: a table synced to a catalog: each sync compares all partitions with the metastore's, so a commit that
#: completed after a later one is never missed (hudi_ops.spark.jobs.meta_sync)
FULL_CATALOG_SYNC = {MetaSyncConfig.INCREMENTAL.name: "false"}


def pushgateway_defaults(job: str) -> dict[str, str]:
    """Hudi's push gateway reporter, as Prometheus scrapes it: one group per hudi-ops job (`hudi_ops_ingest`,
    ...; each table's metrics are named after it, so tables never replace each other's) that outlives the
    job's JVM. Hudi's defaults push to a new random group per JVM and delete it when the JVM ends, often
    before Prometheus' next scrape: a short job's metrics would never be seen."""
    return {MetricsConfig.PUSHGATEWAY_JOB_NAME.name: f"hudi_ops_{job.replace('-', '_')}",
            MetricsConfig.PUSHGATEWAY_RANDOM_SUFFIX.name: "false",
            MetricsConfig.PUSHGATEWAY_DELETE_ON_SHUTDOWN.name: "false"}


def hudi_ops_defaults(job: str, options: Mapping[str, str]) -> dict[str, str]:
    """hudi-ops' defaults for `job` (a job_specs JOB name) that `options` leave unset."""
    if has_zookeeper_lock(options):
        bucket = str(options.get(IndexConfig.TYPE.name, "")).strip().upper() == "BUCKET"
        defaults = {**LOCK_IMPLIES, **LOCK_WAIT, **({} if bucket else INGESTION_FIRST),
                    **(BACKFILL_APART if job == "backfill" else {})}
    else:
        defaults = SINGLE_WRITER_HEARTBEATS if job in WRITERS else {}
    if MetaSyncConfig.enabled(options):
        defaults = {**defaults, **FULL_CATALOG_SYNC}
    metrics = HoodieConfig(dict(options))
    if metrics.get(MetricsConfig.ON) == "TRUE" and metrics.get(MetricsConfig.REPORTER_TYPE) == "PROMETHEUS_PUSHGATEWAY":
        defaults = {**defaults, **pushgateway_defaults(job)}
    return {k: v for k, v in defaults.items() if k not in options}


def resolve_job_options(job: str, options: Mapping[str, str]) -> dict[str, str]:
    """`options` (the tables config and the job's flags) over hudi-ops' defaults for `job`."""
    return {**hudi_ops_defaults(job, options), **options}
