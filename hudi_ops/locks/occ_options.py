"""The `hoodie.*` options that make Hudi's writers and services take a table's ZooKeeper lock (RFC-22 OCC),
and the defaults hudi-ops gives every job of such a table."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hudi_ops.errors import ConfigError
from hudi_ops.locks.job_locks import has_zookeeper_lock

ZOOKEEPER_LOCK_PROVIDER = "org.apache.hudi.client.transaction.lock.ZookeeperBasedLockProvider"
DEFAULT_LOCK_BASE_PATH = "/hudi/locks"
CONCURRENCY_MODE = "hoodie.write.concurrency.mode"
OPTIMISTIC, NON_BLOCKING = "OPTIMISTIC_CONCURRENCY_CONTROL", "NON_BLOCKING_CONCURRENCY_CONTROL"
CLUSTERING_UPDATES_STRATEGY = "hoodie.clustering.updates.strategy"
CONFLICT_RESOLUTION_STRATEGY = "hoodie.write.lock.conflict.resolution.strategy"
PREFER_WRITER = "org.apache.hudi.client.transaction.PreferWriterConflictResolutionStrategy"
INDEX_TYPE = "hoodie.index.type"
BUCKET_ENGINE = "hoodie.index.bucket.engine"
#: Hudi's lock manager retries a lock it did not get 50 more times, 5 s apart, each try waiting
#: `hoodie.write.lock.wait_time_ms`: almost an hour before a job fails. Under Airflow the task's
#: retries (with backoff, and visible) do that job, so the wait is one try:
#: `hoodie.write.lock.wait_time_ms` is how long a writer waits before it exits 4.
LOCK_WAIT = {"hoodie.write.lock.client.num_retries": "0"}
#: Ingestion first: Hudi's default refuses a write that updates a file group a pending clustering plan
#: rewrites, so a table service held writers back. Allowed, the update goes to the file group as it
#: is, and the clustering checks at its commit (PreferWriter: Hudi 1.1 runs that check for clustering
#: and log compaction, not for compaction) for writes to its file groups since it was planned; it
#: yields, and hudi-ops withdraws its plan (hudi_ops.spark.jobs.plan_execution) for the next tick to
#: plan again. A write under a pending compaction plan was never refused: it goes to the next slice.
#: On Hudi 1.1.1 the jobs run hudi-ops' fix of that check (hudi_ops.spark.hudi_java).
INGESTION_FIRST = {
    CLUSTERING_UPDATES_STRATEGY: "org.apache.hudi.client.clustering.update.strategy.SparkAllowUpdateStrategy",
    CONFLICT_RESOLUTION_STRATEGY: PREFER_WRITER,
}


#: A backfill beside other writers puts its inserts into file groups of its own instead of filling the
#: partition's small files (Hudi's default, under 100 MB): those are the file groups the ingest writes
#: into, and two writers' inserts into one small file group are a write conflict for one of them. The
#: clustering service later merges the backfill's smaller files.
BACKFILL_APART = {"hoodie.parquet.small.file.limit": "0"}


#: A table without a lock has one writer, whose failed writes Hudi rolls back at the next write (EAGER)
#: by default, keeping no heartbeat. hudi-ops keeps Hudi's heartbeats there too (LAZY: the next clean
#: rolls a failed write back once its heartbeat expired), so that a second attempt of a batch tells the
#: first, still at work, from a dead one (hudi_ops.spark.jobs.batch_fence). A failed attempt's
#: heartbeat looks alive until it expires, and its retry waits that long: beats every 15 s (Hudi's 60)
#: let the retry after Airflow's second backoff through.
SINGLE_WRITER_HEARTBEATS = {"hoodie.cleaner.policy.failed.writes": "LAZY",
                            "hoodie.client.heartbeat.interval_in_ms": "15000"}


def writer_defaults(options: Mapping[str, str]) -> dict[str, str]:
    """What a writer adds to `options` unless they set it: `SINGLE_WRITER_HEARTBEATS` on a table without
    a lock (the lock's options choose LAZY themselves)."""
    if has_zookeeper_lock(options):
        return {}
    return {k: v for k, v in SINGLE_WRITER_HEARTBEATS.items() if k not in options}


def backfill_defaults(options: Mapping[str, str]) -> dict[str, str]:
    """What a backfill adds to `options` unless they set it: `BACKFILL_APART` on a table with several
    writers (the table's ZooKeeper lock)."""
    if not has_zookeeper_lock(options):
        return {}
    return {k: v for k, v in BACKFILL_APART.items() if k not in options}


def is_simple_bucket_index(options: Mapping[str, str]) -> bool:
    """Whether `options` choose Hudi's simple bucket index, whose file groups are fixed per bucket."""
    return (str(options.get(INDEX_TYPE, "")).strip().upper() == "BUCKET"
            and str(options.get(BUCKET_ENGINE, "SIMPLE")).strip().upper() == "SIMPLE")


def multi_writer_mode(value: str | None) -> str:
    """The concurrency mode a table with a lock runs: optimistic (the default) or non-blocking."""
    mode = (value or OPTIMISTIC).strip().upper()
    if mode not in (OPTIMISTIC, NON_BLOCKING):
        raise ConfigError(f"{CONCURRENCY_MODE}={value} cannot share a table's lock with other writers; "
                          f"use {OPTIMISTIC} (the default) or {NON_BLOCKING}, or drop the setting")
    return mode


def occ_defaults(options: Mapping[str, str]) -> dict[str, str]:
    """The defaults a table's own `options` may change, for every job of a table with several writers.
    A bucket index keeps Hudi's own choices: the conflict check it infers, by bucket (two writers'
    first files of one bucket conflict), and its own clustering update strategy."""
    if str(options.get(INDEX_TYPE, "")).strip().upper() == "BUCKET":
        return dict(LOCK_WAIT)
    return {**LOCK_WAIT, **INGESTION_FIRST}


def with_lock(table_options: Mapping[str, str], lock: Mapping[str, str]) -> dict[str, str]:
    """Every job's options for a table with several writers: hudi-ops' defaults, the table's own, then
    the lock's (which win: every pipeline of the table must share them)."""
    return {**occ_defaults(table_options), **table_options, **lock}


def zookeeper_lock_options(
    host: str, port: int | None, extra: Mapping[str, Any], table_name: str, concurrency_mode: str | None = None
) -> dict[str, str]:
    """`host` names one host or several (comma-separated), each with or without a port; `port` completes
    the others, because Hudi hands the url to Curator as it is and never reads a port key. `extra`
    may set `base_path`, `lock_key` (default: the table's name), `session_timeout_ms` and
    `connection_timeout_ms`. `concurrency_mode`: the table's own choice of Hudi's multi-writer modes,
    optimistic (the default) or non-blocking; both take the lock to commit."""
    mode = multi_writer_mode(concurrency_mode)
    hosts = [h.strip() for h in host.split(",") if h.strip()]
    if not hosts:
        raise ConfigError("the ZooKeeper connection has no host; set it to the ensemble's host name(s)")
    # the connection's port completes the hosts that name none (`connect_string` instead refuses a
    # separate port key, which Hudi would ignore)
    url = ",".join(h if ":" in h or port is None else f"{h}:{port}" for h in hosts)
    return {
        CONCURRENCY_MODE: mode,
        # with several writers a failed write is rolled back by the next writer once its heartbeat
        # expires (LAZY), never eagerly by a writer that cannot know whether it is still running
        "hoodie.cleaner.policy.failed.writes": "LAZY",
        "hoodie.write.lock.provider": ZOOKEEPER_LOCK_PROVIDER,
        "hoodie.write.lock.zookeeper.url": url,
        "hoodie.write.lock.zookeeper.base_path": str(extra.get("base_path") or DEFAULT_LOCK_BASE_PATH),
        "hoodie.write.lock.zookeeper.lock_key": str(extra.get("lock_key") or table_name),
        **{f"hoodie.write.lock.zookeeper.{k}": str(v) for k, v in extra.items()
           if k in ("session_timeout_ms", "connection_timeout_ms")},
    }
