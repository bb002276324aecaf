"""`dedupe`: each key held more than once left once, its latest version kept.

A key is held more than once when it is twice within a partition, under every index, or, under a global index
(the writers' `hoodie.index.type`, as `hudi-ops check duplicates` reads it), in several partitions: there a key
belongs to one partition, and its latest version is kept wherever it is.

The latest version is the one with the greatest value of the table's ordering field, then the latest
commit (`_hoodie_commit_time`), then the sequence number within it, compared as text (a fixed choice, not
the numerically greatest), then the partition path and the file name: an order with no ties, so every
evaluation of the rows picks the same one. The partitions holding an older version are read with Spark's Hudi
reader and written back whole, without those versions, by Hudi's insert_overwrite, the backfill's overwrite
(hudi_ops.spark.jobs.hudi_write): one replacecommit, under the table's lock at its commit and its conflict check
like any writer's. A partition whose only records were older versions (under a global index) is named to the
overwrite (Spark SQL's static partitions), so it is emptied in that commit. Partitions without older versions
are neither read back nor rewritten. `--partitions` limits what is rewritten, not what is compared: under a
global index a key's latest version may be outside them.

Hudi's conflict check covers the writes that complete after the overwrite's instant begins, and the rows
were read before it: a write to those partitions that completed in between would be replaced unread. So
right before the overwrite the job looks for such writes on the timeline and, finding one, stops with
nothing written (exit 3: its retry reads them). What is left is the moment between that look and the
overwrite's instant.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from hudi_ops.errors import ConcurrentJobError, InvalidInputError
from hudi_ops.format.meta_client import MetaClient
from hudi_ops.format.meta_fields import (
    COMMIT_SEQNO,
    COMMIT_TIME,
    FILE_NAME,
    META_COLUMNS,
    PARTITION_PATH,
    RECORD_KEY,
)
from hudi_ops.job_specs.repairs import DedupeSpec
from hudi_ops.job_specs.results import ServiceResult, since
from hudi_ops.options.keys import DataSourceWriteConfig, IndexConfig
from hudi_ops.read.duplicate_keys import is_global_index, require_meta_fields
from hudi_ops.spark.jobs import hudi_write
from hudi_ops.spark.jobs.target import resolve_target

OVERWRITE = "INSERT_OVERWRITE"
_RANK = "_hudi_ops_dedupe_rank"
#: after the ordering field, what orders a key's versions newest first, with no two alike (a sequence number is
#: unique within a commit's file only)
_TIEBREAK = (COMMIT_TIME, COMMIT_SEQNO, PARTITION_PATH, FILE_NAME)


def run(spec: DedupeSpec, options: dict[str, str], spark: Callable[[], Any]) -> ServiceResult:
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    started = time.perf_counter()
    meta = MetaClient.open(spec.base_path)  # a missing table is named as such, before Spark
    require_meta_fields(meta)
    target = resolve_target(spec.base_path, options)
    mode = "dry-run" if spec.dry_run else "repair"
    index_type = options.get(IndexConfig.TYPE.name)
    key = (RECORD_KEY,) if is_global_index(index_type) else (PARTITION_PATH, RECORD_KEY)
    read = {i.requested_time for i in meta.timeline().completed_writes()}  # at most what the reader sees
    session = spark()
    table = session.read.format("hudi").load(spec.base_path)
    chosen = spec.partition_paths()
    if chosen is not None and len(key) == 2:  # versions compared within a partition: read only the chosen
        table = table.where(F.col(PARTITION_PATH).isin(*chosen))
    held = table.groupBy(*key).count().where(F.col("count") > 1).drop("count")
    ordering = [F.col(target.ordering_field).desc_nulls_last()] if target.ordering_field else []
    latest = Window.partitionBy(*key).orderBy(*ordering, *(F.col(c).desc() for c in _TIEBREAK))
    ranked = table.join(held, list(key)).withColumn(_RANK, F.row_number().over(latest))  # the keys held twice
    older = ranked.where(F.col(_RANK) > 1)  # every version of a key but its latest
    if chosen is not None:
        older = older.where(F.col(PARTITION_PATH).isin(*chosen))
    doubled = (older.groupBy(PARTITION_PATH).agg(F.countDistinct(RECORD_KEY).alias("keys"),
                                                 F.count("*").alias("removed"))
               .orderBy(PARTITION_PATH).collect())
    details = {"removed": {r[PARTITION_PATH]: r["removed"] for r in doubled},
               "keys": {r[PARTITION_PATH]: r["keys"] for r in doubled}}
    if not doubled:
        among = f" (partitions {', '.join(chosen)} only)" if chosen else ""
        scope = f"in the table{among}, index {index_type}: a key in two partitions counts" if len(key) == 1 \
            else f"within a partition{among}"
        return ServiceResult("dedupe", mode, reason=f"no key is held more than once {scope}", details=details,
                             durations_ms=since(started))
    if spec.dry_run:
        return ServiceResult("dedupe", mode, outcome="planned", details=details, durations_ms=since(started))
    rewritten = sorted(details["removed"])
    in_rewritten = F.col(PARTITION_PATH).isin(*rewritten)
    # the rewritten partitions' records of keys held once, and the latest versions there of the others
    kept = (table.where(in_rewritten).join(held, list(key), "left_anti")
            .unionByName(ranked.where(in_rewritten & (F.col(_RANK) == 1)).drop(_RANK))
            .select(*[c for c in table.columns if c not in META_COLUMNS]))
    emptied = _emptied(table.where(in_rewritten), details["removed"]) if len(key) == 1 else []
    if written_since := _written_since(meta, read, set(rewritten)):
        raise ConcurrentJobError(f"write(s) {', '.join(written_since)} completed in partitions being repaired after "
                                 "the repair read them; nothing written: run the repair again")
    run_id, write_options = hudi_write.write_options(target, OVERWRITE, options, job="dedupe", extra_metadata={})
    if emptied:
        write_options[DataSourceWriteConfig.STATIC_OVERWRITE_PARTITIONS.name] = ",".join(rewritten)
    written = hudi_write.write(session, kept, target, write_options, run_id, spec.base_path)
    commit = written.commit
    warnings = (f"commit {commit.instant} completed, then Hudi failed: {written.after_commit}",) \
        if written.after_commit else ()
    return ServiceResult("dedupe", mode, commit.instant, "completed", files=commit.files, bytes=commit.bytes,
                         rows=commit.writes, warnings=warnings, details=details, durations_ms=since(started))


def _emptied(rows: Any, removed: dict[str, int]) -> list[str]:
    """The partitions (of `rows`, the rewritten ones') whose every record is an older version. The overwrite must
    name them, as no record it writes does, and then every partition it rewrites, in a list Hudi splits on commas."""
    records = {r[PARTITION_PATH]: r["count"] for r in rows.groupBy(PARTITION_PATH).count().collect()}
    emptied = sorted(p for p, n in removed.items() if records.get(p) == n)
    if emptied and (commas := sorted(p for p in records if "," in p)):
        raise InvalidInputError(f"dedupe would leave partition(s) {', '.join(emptied)} empty, so it must name every "
                                f"partition it rewrites to Hudi in a comma-separated list, and {'; '.join(commas)} "
                                "hold a comma: repair the others first (--partitions)")
    return emptied


def _written_since(meta: MetaClient, read: set[str], partitions: set[str]) -> list[str]:
    """The writes into `partitions` that completed after the completed writes `read`."""
    timeline = meta.reload().timeline()
    return sorted(i.requested_time for i in timeline.completed_writes() if i.requested_time not in read
                  and partitions & set(timeline.commit_metadata(i).partition_to_write_stats))
