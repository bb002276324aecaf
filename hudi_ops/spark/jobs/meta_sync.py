"""Hudi's catalog sync (HiveSyncTool, mode `hms`), run by hudi-ops after a job's commit, one at a time per
table.

A table whose options turn `hoodie.datasource.meta.sync.enable` on is registered in its Hive
Metastore: its schema, its partitions, and for MERGE_ON_READ Hudi's `_ro` and `_rt` tables. Hudi's
writer would sync inline, right after each commit, from every writer at once; with several writers
that loses partitions (a commit that completes after a later one is never synced incrementally,
apache/hudi#7570; two syncs at once race, #9046). So the writer's own sync stays off
(`writer_options`), and each job that changed the table syncs after its commit, holding the table's
catalog lock (hudi_ops.locks.job_locks.catalog_lock) and comparing all of the table's partitions with
the metastore's (`hoodie.meta.sync.incremental=false`, hudi-ops' default): the last sync sees every
commit before it. A sync that failed leaves the commit as it is and the job reports it under its result's
`warnings` (a failed task would be retried, find its batch committed and be skipped, and the commit's
Asset event, which starts the services, would be lost); the next sync, after any pipeline's next
commit, brings the catalog up to date. A writer whose
batch another attempt committed syncs again (that attempt's sync may be the one that failed).
"""

from __future__ import annotations

import contextlib
import functools
import time
from collections.abc import Mapping
from typing import Any

from hudi_ops.errors import CatalogSyncError, ConfigError, HudiOpsError
from hudi_ops.format.meta_client import MetaClient
from hudi_ops.job_specs.results import ALREADY_COMMITTED, COMMITTED, JobResult, ServiceResult
from hudi_ops.locks.job_locks import catalog_lock
from hudi_ops.options.config_property import HoodieConfig
from hudi_ops.options.keys import HIVE_SYNC_TOOL, LockConfig, MetaSyncConfig
from hudi_ops.options.occ import has_zookeeper_lock
from hudi_ops.spark.java_errors import JavaFailure

#: what each job's outcome must be for the catalog (schema, partitions) to have something new: a
#: writer's commit (or the commit of another attempt of its batch, whose sync may have failed), a
#: restore. A compaction or clustering rewrites files and changes neither.
SYNCED_AFTER = {
    "ingest": (COMMITTED, ALREADY_COMMITTED),
    "backfill": (COMMITTED, ALREADY_COMMITTED),
    "restore": ("restored",),
}
#: Hudi's writer syncs inline when either is on; hudi-ops syncs after the commit instead
_INLINE_SYNC_KEYS = (MetaSyncConfig.ENABLED.name, *MetaSyncConfig.ENABLED.aliases)
#: the metastore's client failing to reach it (Hive's thrift transport, or its retrying client giving up)
_UNREACHABLE = ("org.apache.thrift.transport.TTransportException", "java.net.ConnectException")
_UNREACHABLE_TEXT = ("Could not connect to meta store", "Connection refused")


def writer_options(options: Mapping[str, str]) -> dict[str, str]:
    """`options` for Hudi's writer and write client: its own inline sync off (hudi-ops syncs after)."""
    if not MetaSyncConfig.enabled(options):
        return dict(options)
    return {**options, **dict.fromkeys(_INLINE_SYNC_KEYS, "false")}


def catalog_table(options: Mapping[str, str], table_name: str) -> str:
    """`database.table` as the catalog names the table (MERGE_ON_READ's `_ro` and `_rt` beside it)."""
    config = HoodieConfig(dict(options))
    return f"{config.get(MetaSyncConfig.DATABASE)}.{config.get(MetaSyncConfig.TABLE) or table_name}"


def due(job: str, result: JobResult | ServiceResult, options: Mapping[str, str]) -> bool:
    return MetaSyncConfig.enabled(options) and result.outcome in SYNCED_AFTER.get(job, ())


def check_options(job: str, options: Mapping[str, str]) -> None:
    """Before the run writes anything: a sync it will run must know where the metastore is."""
    if job not in SYNCED_AFTER or not MetaSyncConfig.enabled(options):
        return
    config = HoodieConfig(dict(options))
    if HIVE_SYNC_TOOL in _tools(config) and config.get(MetaSyncConfig.MODE) == "HMS" and \
            not config.get(MetaSyncConfig.METASTORE_URIS):
        raise ConfigError(f"the catalog sync is on ({MetaSyncConfig.ENABLED.name}) but "
                          f"{MetaSyncConfig.METASTORE_URIS.name} is not set: name the Hive Metastore "
                          "(thrift://host:9083), or under Airflow the table's `catalog:` and its connection")


def _tools(config: HoodieConfig) -> tuple[str, ...]:
    return config.get(MetaSyncConfig.TOOL_CLASSES) or (HIVE_SYNC_TOOL,)


def sync_catalog(spark: Any, base_path: str, options: Mapping[str, str], *, after: str) -> tuple[str, float]:
    """Sync the table at `base_path` to its catalog, under its catalog lock; (`database.table`, seconds).
    `after`: what the run did (its failure names it: that stands whatever the sync does)."""
    from py4j.java_gateway import JavaClass
    from py4j.protocol import Py4JError

    started = time.monotonic()
    meta = MetaClient.open(base_path)
    table_name = meta.properties.table_name
    table = catalog_table(options, table_name)
    config = HoodieConfig(dict(options))
    tools = _tools(config)
    # the table's own settings first (Hudi infers the partition columns and their extractor from them)
    props = {**meta.properties.values, **options, MetaSyncConfig.BASE_PATH.name: base_path}
    wait_s = (config.get(LockConfig.WAIT_MS) or 0) / 1000
    held = catalog_lock(options, table_name, wait_s) if has_zookeeper_lock(options) else contextlib.nullcontext()
    jvm = spark.sparkContext._jvm
    with held:
        java_props = jvm.java.util.Properties()
        for key, value in props.items():
            java_props.setProperty(key, str(value))
        try:
            for name in tools:  # each a HoodieSyncTool: made from (properties, Hadoop configuration)
                tool = functools.reduce(getattr, name.split("."), jvm)
                if not isinstance(tool, JavaClass):  # Py4J names a class it cannot load a package
                    raise CatalogSyncError(
                        f"{after}, but the catalog sync cannot start: {MetaSyncConfig.TOOL_CLASSES.name} names "
                        f"{name}, which is not on the job's class path; add its jar (AWS Glue's sync tool is in "
                        "org.apache.hudi:hudi-aws-bundle) to the job's jars")
                # syncHoodieTable closes the tool's metastore client, also when it fails
                tool(java_props, spark.sparkContext._jsc.hadoopConfiguration()).syncHoodieTable()
        except Py4JError as e:
            raise _sync_error(e, table, after) from e
    return table, time.monotonic() - started


def _sync_error(error: BaseException, table: str, after: str) -> HudiOpsError:
    failure = JavaFailure.of(error)
    said = failure.summary if failure else str(error)
    text = "\n".join(m for _, m in failure.chain) if failure else said
    unreachable = (failure and failure.find(*_UNREACHABLE) is not None) or any(t in text for t in _UNREACHABLE_TEXT)
    fix = (f"check {MetaSyncConfig.METASTORE_URIS.name} and that the metastore runs" if unreachable
           else "see the job's log for Hudi's error")
    return CatalogSyncError(f"{after}, then its catalog sync to {table} failed ({said}): the table stands as "
                            f"committed and the catalog catches up at the next sync, after any pipeline's next "
                            f"commit; {fix}")
