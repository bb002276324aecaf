"""Soaks: one table, many consecutive commits through the jobs. Every job must succeed on its first
try, with Hudi's inline services (cleaning, archival, the metadata table's compaction) running as the
writers run them, and hudi-rs and Spark's reader must each read exactly the plain model of the batches.
Batches are small: the commits are what count.

In `make test` the 40-commit soaks run their jobs in the shared session, and 12 upserts run as
spark-submits of their own, a fresh JVM each, across the metadata table's first compaction: that is
where Hudi 1.2.0 failed on the 8th commit while a shared session hid it. `make soak` runs every soak
job as a spark-submit (HUDI_OPS_SOAK_RUNNER=spark-submit).
"""

from __future__ import annotations

import contextlib
import io
import os
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from hudi_ops.config import INLINE_SERVICE_OFF
from hudi_ops.format.instant import Action
from hudi_ops.format.meta_client import MetaClient
from hudi_ops.job_specs import ClusterSpec, CompactSpec, ServiceSpec
from hudi_ops.spark.__main__ import main
from tests.integration.lock_options import occ_options
from tests.integration.processes import run_job
from tests.integration.test_spark_jobs import ingest_args
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

DAYS = ("2026-11-20", "2026-11-21")
#: how the 40-commit soaks run their jobs: in the shared session, or `spark-submit` (`make soak`)
RUNNER = os.environ.get("HUDI_OPS_SOAK_RUNNER", "session")
Runner = Callable[[list[str], Path], tuple[int, dict[str, Any]]]


def spark_submit() -> Runner:
    return run_job


def in_session(spark: Any) -> Runner:
    def run(args: list[str], log: Path) -> tuple[int, dict[str, Any]]:
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            code = main(args, spark=spark)
        log.write_text(out.getvalue())
        return code, job_result(out.getvalue())

    return run


@pytest.fixture
def runner(spark) -> Runner:
    assert RUNNER in ("session", "spark-submit"), f"HUDI_OPS_SOAK_RUNNER={RUNNER}: use session or spark-submit"
    return spark_submit() if RUNNER == "spark-submit" else in_session(spark)


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


def upserts(soak: Soak, count: int) -> None:
    """`count` consecutive upserts into a new table with Hudi's defaults."""
    soak.write("UPSERT", inserts=12)
    for n in range(2, count + 1):
        soak.write("UPSERT", updates=3, inserts=3)
        if n == 8:  # where Hudi 1.2.0 failed: the first compaction of the metadata table came before it
            assert metadata_table_compactions(soak.table) >= 1


def test_upserts_each_in_a_fresh_jvm_commit_first_try_past_the_metadata_tables_compaction(spark, tmp_path):
    soak = Soak(tmp_path, spark_submit())
    upserts(soak, 12)
    soak.reads_the_model(spark)


def test_a_copy_on_write_table_takes_40_upserts_then_inserts_and_deletes_first_try(spark, tmp_path, runner):
    soak = Soak(tmp_path, runner)
    upserts(soak, 40)
    for _ in range(2):
        soak.write("INSERT", inserts=4)
        soak.write("DELETE", updates=3)
    soak.reads_the_model(spark)
    assert completed(soak.table, Action.COMMIT) == 44 and completed(soak.table, Action.CLEAN) >= 1
    inline_services_ran(soak.table)


def inline_services_ran(table: Path) -> None:
    assert metadata_table_compactions(table) >= 3  # the metadata table compacted again and again
    assert next(MetaClient.open(table).archived_timeline(), None) is not None  # archival ran


def test_a_merge_on_read_table_takes_40_writes_with_compaction_and_clustering_between_first_try(
        spark, tmp_path, runner, zookeeper):
    """Upserts, inserts and deletes, with compaction and clustering scheduled and executed as separate
    jobs between them, every job with the table's ZooKeeper lock as under Airflow."""
    # Hudi's datasource compacts a MERGE_ON_READ table inline unless told not to: the services DAG's jobs do it
    off = {**INLINE_SERVICE_OFF["compaction"], **INLINE_SERVICE_OFF["clustering"]}
    soak = Soak(tmp_path, runner, table_type="MERGE_ON_READ", options={**occ_options(zookeeper.url), **off})
    soak.write("UPSERT", inserts=12)
    for n in range(2, 41):
        op = ("DELETE", "UPSERT", "UPSERT", "INSERT", "UPSERT")[n % 5]
        soak.write(op, updates=0 if op == "INSERT" else 2, inserts=0 if op == "DELETE" else 3)
        if n in (10, 30):  # a plan, a write beside it (to log files of its file groups), then its execution
            scheduled = soak.service(CompactSpec, mode="schedule")
            assert scheduled["outcome"] == "scheduled", scheduled
        if n in (11, 31):
            executed = soak.service(CompactSpec, mode="execute")
            assert (executed["instant"], executed["outcome"]) == (scheduled["instant"], "completed"), executed
        if n in (20, 36):  # nothing written between: an update to a clustered file group would be refused
            scheduled = soak.service(ClusterSpec, mode="schedule")
            assert scheduled["outcome"] == "scheduled", scheduled
            executed = soak.service(ClusterSpec, mode="execute")
            assert (executed["instant"], executed["outcome"]) == (scheduled["instant"], "completed"), executed
    soak.reads_the_model(spark)
    actions = Counter(a for a in (Action.DELTA_COMMIT, Action.COMMIT, Action.REPLACE_COMMIT)
                      for _ in range(completed(soak.table, a)))
    assert actions == {Action.DELTA_COMMIT: 40, Action.COMMIT: 2, Action.REPLACE_COMMIT: 2}, actions
    assert completed(soak.table, Action.CLEAN) >= 1  # the writers' inline clean, after the compactions
    inline_services_ran(soak.table)


def test_twelve_small_bulk_inserts_cluster_into_at_most_two_file_slices(spark, tmp_path, runner, zookeeper):
    """Hudi's clustering example: 12 BULK_INSERT commits of small files, then one clustering job."""
    soak = Soak(tmp_path, runner, options={**occ_options(zookeeper.url), "hoodie.parquet.small.file.limit": "0"})
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
