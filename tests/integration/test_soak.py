"""Soaks: one table, many consecutive commits through the jobs. Every job must succeed on its first
try, with Hudi's inline services (cleaning, archival, the metadata table's compaction) running as the
writers run them, and hudi-rs and Spark's reader must each read exactly the plain model of the batches.
Batches are small: the commits are what count.

Two sizes (HUDI_OPS_SOAK). `make soak` (`full`): 40 commits per table with Hudi's own triggers, every
job a spark-submit of its own. `make test` and `make test-long` (`short`): 12 commits with triggers a few commits apart
(SHORT_TRIGGERS), so that each service still runs again and again, the jobs in the shared session, and
6 upserts as spark-submits of their own, a fresh JVM each, across the metadata table's first compaction:
that is where Hudi 1.2.0 failed on the 8th commit (with its default trigger) while a shared session hid it.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from hudi_ops.format.instant import Action
from hudi_ops.format.meta_client import MetaClient
from hudi_ops.job_specs import ClusterSpec, CompactSpec, ServiceSpec
from hudi_ops.read.table_services import CLUSTERING, COMPACTION, inline_off
from tests.integration.lock_options import occ_options
from tests.integration.processes import run_job
from tests.integration.test_spark_jobs import ingest_args, run_captured
from tests.tables import (
    Model,
    files_by_listing,
    files_by_metadata_table,
    job_result,
    read_hudi_rs,
    read_spark,
    trips,
    write_source,
)

pytestmark = [pytest.mark.spark, pytest.mark.slow]  # spark-submit jobs of its own; minutes in all

DAYS = ("2026-11-20", "2026-11-21")
Runner = Callable[[list[str], Path], tuple[int, dict[str, Any]]]
#: the metadata table compacts every 3 of its delta commits (Hudi: 10), a MERGE_ON_READ table's compaction is
#: due after 3 (5), the writers' clean keeps 2 commits (10) and archival keeps 3 to 4 (20 to 30): the metadata
#: table archives with the data table's bounds plus one, after its compactions
SHORT_TRIGGERS = {"hoodie.metadata.compact.max.delta.commits": "3", "hoodie.compact.inline.max.delta.commits": "3",
                  "hoodie.cleaner.commits.retained": "2", "hoodie.keep.min.commits": "3",
                  "hoodie.keep.max.commits": "4"}


@dataclass(frozen=True)
class SoakSize:
    commits: int  # per writer soak
    fresh_jvm_upserts: int  # the spark-submit soak's
    first_metadata_compaction: int  # the upsert by which the metadata table has compacted
    options: dict[str, str]  # for every job
    runner: str  # "session" or "spark-submit": how the other soaks run their jobs
    #: the MERGE_ON_READ soak's commits after which a compaction is planned (and run after the next), and
    #: after which a clustering is planned and run: each where Hudi's trigger finds it due
    compactions: tuple[int, int]
    clusterings: tuple[int, int]


SIZES = {
    "short": SoakSize(12, 6, 4, SHORT_TRIGGERS, "session", compactions=(5, 10), clusterings=(7, 12)),
    "full": SoakSize(40, 12, 8, {}, "spark-submit", compactions=(10, 30), clusterings=(20, 36)),
}
SOAK = os.environ.get("HUDI_OPS_SOAK", "short")


def spark_submit() -> Runner:
    return run_job


def in_session(spark: Any) -> Runner:
    def run(args: list[str], log: Path) -> tuple[int, dict[str, Any]]:
        code, out = run_captured(args, spark)
        log.write_text(out)
        return code, job_result(out)

    return run


@pytest.fixture
def size() -> SoakSize:
    assert SOAK in SIZES, f"HUDI_OPS_SOAK={SOAK}: use one of {sorted(SIZES)}"
    return SIZES[SOAK]


@pytest.fixture
def runner(spark, size) -> Runner:
    return spark_submit() if size.runner == "spark-submit" else in_session(spark)


class Soak:
    """Jobs on one table, one after another; each must succeed on its first try."""

    def __init__(self, work: Path, runner: Runner, *, table_type: str | None = None,
                 options: dict[str, str] | None = None) -> None:
        """`table_type` for the writers, `options` (hoodie.*) for every job."""
        self.table, self.landing, self.logs = work / "trips", work / "landing", work / "logs"
        self.logs.mkdir(parents=True)
        self.table_type, self.options = table_type, options or {}
        self.runner, self.model, self.jobs, self.next_key = runner, Model(), 0, 0

    def job(self, args: list[str]) -> dict[str, Any]:
        self.jobs += 1
        code, result = self.runner(args, self.logs / f"{self.jobs:03d}-{args[0]}.log")
        assert code == 0 and not result["warnings"], f"job {self.jobs} ({' '.join(args[:3])}): {result}"
        return result

    def write(self, op: str, *, updates: int = 0, inserts: int = 0) -> dict[str, Any]:
        """One ingest of a new landing file: `updates` existing keys (or deletes of them), `inserts` new ones."""
        ts = self.jobs + 1  # newer than every row written before: deletes and updates always win
        keys = sorted(self.model.rows)[:: max(1, len(self.model.rows) // max(updates, 1))][:updates]
        rows = [{**self.model.rows[k], "ts": ts, "fare": float(ts)} for k in keys]
        for n in range(inserts):
            rows += trips(DAYS[(self.next_key + n) % 2], [self.next_key + n], ts=ts)
        self.next_key += inserts
        write_source(self.landing / f"{self.jobs:03d}.parquet", rows)
        result = self.job(self.ingest_args(op))
        assert result["commits"] == 1 and result["operation"] == op, result
        if op == "DELETE":
            assert result["deletes"] == len(rows)
            for r in rows:
                del self.model.rows[r["trip_id"]]
        else:
            assert (result["updates"], result["inserts"]) == (len(keys), inserts), result
            self.model.upsert(rows)
        return result

    def ingest_args(self, op: str) -> list[str]:
        """An ingest of the landing folder with Hudi's write operation `op`."""
        return ingest_args(self.table, self.landing, operation=op, table_type=self.table_type, hoodie_conf=self.options)

    def service(self, job: type[ServiceSpec], **fields: Any) -> dict[str, Any]:
        return self.job(job(base_path=str(self.table), hoodie_conf=self.options, **fields).to_argv())

    def reads_the_model(self, spark: Any) -> None:
        assert read_hudi_rs(self.table) == read_spark(spark, self.table) == self.model.expected()
        # the control plane takes the files from the metadata table: after compactions, cleans and archival
        # of both tables, it must name exactly the files of the completed instants
        assert files_by_metadata_table(self.table) == files_by_listing(self.table)


def completed(table: Path, action: str) -> int:
    """Completed instants of `action`, on the active timeline and the archived one."""
    meta = MetaClient.open(table)
    return (sum(1 for i in meta.timeline().completed if i.action == action)
            + sum(1 for a in meta.archived_timeline() if a.action == action))


def metadata_table_compactions(table: Path) -> int:
    """The metadata table is a MERGE_ON_READ Hudi table of its own: its compactions complete as commits."""
    return completed(table / ".hoodie" / "metadata", Action.COMMIT)


def upserts(soak: Soak, count: int, size: SoakSize) -> None:
    """`count` consecutive upserts into a new table."""
    soak.write("UPSERT", inserts=12)
    for n in range(2, count + 1):
        soak.write("UPSERT", updates=3, inserts=3)
        if n == size.first_metadata_compaction:  # where Hudi 1.2.0 failed: the metadata table compacted before it
            assert metadata_table_compactions(soak.table) >= 1


@pytest.mark.long
def test_upserts_each_in_a_fresh_jvm_commit_first_try_past_the_metadata_tables_compaction(spark, tmp_path, size):
    soak = Soak(tmp_path, spark_submit(), options=size.options)
    upserts(soak, size.fresh_jvm_upserts, size)
    soak.reads_the_model(spark)


@pytest.mark.long
def test_a_copy_on_write_table_takes_upserts_then_inserts_and_deletes_first_try(spark, tmp_path, runner, size):
    soak = Soak(tmp_path, runner, options=size.options)
    upserts(soak, size.commits, size)
    for _ in range(2):
        soak.write("INSERT", inserts=4)
        soak.write("DELETE", updates=3)
    soak.reads_the_model(spark)
    assert completed(soak.table, Action.COMMIT) == size.commits + 4 and completed(soak.table, Action.CLEAN) >= 1
    inline_services_ran(soak.table)


def inline_services_ran(table: Path) -> None:
    assert metadata_table_compactions(table) >= 3  # the metadata table compacted again and again
    assert next(MetaClient.open(table).archived_timeline(), None) is not None  # archival ran


def test_a_merge_on_read_table_takes_writes_with_compaction_and_clustering_between_first_try(
        spark, tmp_path, runner, zookeeper, size):
    """Upserts, inserts and deletes, with compaction and clustering scheduled and executed as separate
    jobs between them (each twice, spread over the soak), every job with the table's ZooKeeper lock as
    under Airflow."""
    # Hudi's datasource compacts a MERGE_ON_READ table inline unless told not to: the services DAG's jobs do it
    off = inline_off((COMPACTION.name, CLUSTERING.name))
    soak = Soak(tmp_path, runner, table_type="MERGE_ON_READ",
                options={**occ_options(zookeeper.url), **off, **size.options})
    compactions, clusterings = size.compactions, size.clusterings
    soak.write("UPSERT", inserts=12)
    for n in range(2, size.commits + 1):
        op = ("DELETE", "UPSERT", "UPSERT", "INSERT", "UPSERT")[n % 5]
        soak.write(op, updates=0 if op == "INSERT" else 2, inserts=0 if op == "DELETE" else 3)
        if n in compactions:  # a plan, a write beside it (to log files of its file groups), then its execution
            scheduled = soak.service(CompactSpec, mode="schedule")
            assert scheduled["outcome"] == "scheduled", scheduled
        if n - 1 in compactions:
            executed = soak.service(CompactSpec, mode="execute")
            assert (executed["instant"], executed["outcome"]) == (scheduled["instant"], "completed"), executed
        if n in clusterings:  # nothing written between: an update to a clustered file group would be refused
            scheduled = soak.service(ClusterSpec, mode="schedule")
            assert scheduled["outcome"] == "scheduled", scheduled
            executed = soak.service(ClusterSpec, mode="execute")
            assert (executed["instant"], executed["outcome"]) == (scheduled["instant"], "completed"), executed
    soak.reads_the_model(spark)
    actions = Counter(a for a in (Action.DELTA_COMMIT, Action.COMMIT, Action.REPLACE_COMMIT)
                      for _ in range(completed(soak.table, a)))
    assert actions == {Action.DELTA_COMMIT: size.commits, Action.COMMIT: 2, Action.REPLACE_COMMIT: 2}, actions
    assert completed(soak.table, Action.CLEAN) >= 1  # the writers' inline clean, after the compactions
    inline_services_ran(soak.table)


@pytest.mark.long
def test_twelve_small_bulk_inserts_cluster_into_at_most_two_file_slices(spark, tmp_path, runner, zookeeper, size):
    """Hudi's clustering example: 12 BULK_INSERT commits of small files, then one clustering job."""
    soak = Soak(tmp_path, runner, options={**occ_options(zookeeper.url), "hoodie.parquet.small.file.limit": "0",
                                           **size.options})
    for n in range(12):
        rows = trips(DAYS[0], range(n * 5, n * 5 + 5), ts=1)
        write_source(soak.landing / f"{n:03d}.parquet", rows)
        result = soak.job(soak.ingest_args("BULK_INSERT"))
        assert result["commits"] == 1 and result["inserts"] == 5, result
        soak.model.upsert(rows)
    meta = MetaClient.open(soak.table)
    assert len([g for g in meta.fs_view().file_groups() if g.latest_slice]) == 12
    result = soak.service(ClusterSpec, mode="scheduleAndExecute")
    assert result["outcome"] == "completed" and result["file_groups"] == 12, result
    live = [g for g in MetaClient.open(soak.table).fs_view().file_groups() if g.latest_slice]
    assert 1 <= len(live) <= 2
    soak.reads_the_model(spark)
