"""ZooKeeper locks beside a table's own, for what Hudi's lock does not cover: one executor per
compaction or clustering plan, one cleaner at a time, one writer creating the table.

Hudi takes the table's lock only to schedule a plan and to commit its result; the execution between
runs unlocked, so two executors of one plan (an Airflow retry overlapping a slow attempt, two runs of
a services DAG) would rewrite the same file groups at once, which can corrupt the table (apache/hudi
PR #18012). The executor of a plan holds `<base_path>/<lock_key>.<service>.<instant>` (beside the
table's lock node, never under it: Hudi's lock treats every child there as a contender) for the whole
execution; a second executor waits for it, then finds the plan's outcome on the timeline.

Cleans and rollbacks of failed writes hold `<lock_key>.clean`: two processes rolling back one failed
write at once fail one another in Hudi (one deletes the instant the other is about to delete), and
Hudi's rollback takes no heartbeat that would keep a second one away.

The first write of a new table holds `<lock_key>.create` until it committed: two first writers would
otherwise race to create the table, and the one that finds `.hoodie/` without its hoodie.properties fails.

A catalog sync holds `<lock_key>.catalog`: each sync compares all of the table's partitions with the
metastore's and adds and drops the difference, so two at once could drop what the other just added
(apache/hudi#7570, #9046), while one after another the last sees every commit before it.

A writer holds its batch's fence, `<lock_key>.ingest.<source>` or `<lock_key>.backfill.<day>`, from
before it looks for work until its commit: two attempts of one batch (an orphaned attempt beside
Airflow's retry, one window triggered twice) would otherwise both insert its new keys, each into file
groups of its own, where Hudi's OCC sees no overlap (hudi_ops.spark.jobs.batch_fence).
"""

from __future__ import annotations

from collections.abc import Mapping

from hudi_ops.locks.held_lock import HeldLock
from hudi_ops.options.config_property import HoodieConfig
from hudi_ops.options.keys import ZK_LOCK_KEY, WriteConfig


def plan_lock(options: Mapping[str, str], table_name: str, service: str, instant: str, wait_s: float) -> HeldLock:
    """`with plan_lock(options, table, "compaction", instant, wait_s): execute the plan`."""
    return _lock_beside_table(options, table_name, f"{service}.{instant}", wait_s)


def cleaner_lock(options: Mapping[str, str], table_name: str, wait_s: float) -> HeldLock:
    """`with cleaner_lock(options, table, wait_s): clean, or roll back failed writes`."""
    return _lock_beside_table(options, table_name, "clean", wait_s)


def creation_lock(options: Mapping[str, str], table_name: str, wait_s: float) -> HeldLock:
    """`with creation_lock(options, table, wait_s): create the table with a first write`."""
    return _lock_beside_table(options, table_name, "create", wait_s)


def catalog_lock(options: Mapping[str, str], table_name: str, wait_s: float) -> HeldLock:
    """`with catalog_lock(options, table, wait_s): sync the table to its catalog`."""
    return _lock_beside_table(options, table_name, "catalog", wait_s)


def batch_lock(options: Mapping[str, str], table_name: str, batch: str, wait_s: float) -> HeldLock:
    """`with batch_lock(options, table, "ingest.<source>", wait_s): write the batch`."""
    return _lock_beside_table(options, table_name, batch, wait_s, kind="fence_wait")


def _lock_beside_table(options: Mapping[str, str], table_name: str, suffix: str, wait_s: float, *,
                       kind: str = "lock_wait") -> HeldLock:
    config = HoodieConfig(dict(options))
    table_key = config.get(ZK_LOCK_KEY) or config.get(WriteConfig.TABLE_NAME) or table_name
    return HeldLock({**options, ZK_LOCK_KEY.name: f"{table_key}.{suffix}"}, table_name, wait_s=wait_s, transient=True,
                    kind=kind)
