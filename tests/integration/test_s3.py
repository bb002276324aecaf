"""Tables on object storage: Hudi's writer and table services through s3a, on a real local S3 server
(moto's), read back by hudi-rs, Spark's Hudi reader and the control plane (pyarrow's S3).

The first test runs every job as a spark-submit, with the keys in its environment only (never its
command line or output); the second runs clustering, savepoint and restore in the tests' shared
session pointed at the same kind of server, and holds the control plane to Hudi's own procedures.
(The conflict matrix and the SIGKILL test on S3 are in test_concurrent_writers.)"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pyarrow.fs as pafs
import pytest

from hudi_ops.format.meta_client import MetaClient
from hudi_ops.job_specs import BackfillSpec, CleanSpec, ClusterSpec, CompactSpec, RestoreSpec, SavepointSpec
from hudi_ops.read.table_overview import commit_stats, file_group_summaries
from hudi_ops.sources.files import ingest_work
from hudi_ops.storage import Storage
from tests.integration.lock_options import occ_options
from tests.integration.processes import Job
from tests.integration.test_spark_jobs import ingest_args, run, trips_args
from tests.s3_lake import S3Lake
from tests.tables import (
    COLUMNS,
    Model,
    files_by_listing,
    files_by_metadata_table,
    read_hudi_rs,
    read_spark,
    trips,
    write_source,
)

pytestmark = pytest.mark.spark  # spark-submit jobs of its own

DAY, OLD_DAY = "2026-11-20", "2026-11-10"
COMPACT_EVERY_COMMIT = {"hoodie.compact.inline.max.delta.commits": "1"}
KEEP_ONE_VERSION = {"hoodie.cleaner.policy": "KEEP_LATEST_FILE_VERSIONS", "hoodie.cleaner.fileversions.retained": "1"}


def submit(s3: S3Lake, job_args: list[str], log: Path) -> tuple[list[str], int, dict]:
    job = Job.start(job_args, log, **s3.job_kwargs())
    return list(job.process.args), *job.finish(timeout_s=600)


@pytest.mark.slow
def test_ingest_backfill_compaction_and_clean_on_an_s3a_table_under_the_zookeeper_lock(s3, tmp_path, zookeeper):
    """A MERGE_ON_READ table on S3: two ingests (the second updates, into log files), a backfill day,
    then Hudi's compaction and a clean as the services DAG runs them; hudi-rs reads the model."""
    table, landing, history, model = s3.uri("warehouse/trips"), tmp_path / "landing", tmp_path / "history", Model()
    options = occ_options(zookeeper.url)
    logs: list[Path] = []

    def job(argv: list[str]) -> dict:
        logs.append(tmp_path / f"{len(logs)}-{argv[0]}.log")
        command, code, result = submit(s3, argv, logs[-1])
        assert code == 0, logs[-1].read_text()[-3000:]
        for secret in (s3.server.secret_key, s3.server.access_key):  # the keys went through the environment only
            assert not any(secret in arg for arg in command)
        return result

    def ingest() -> dict:
        return job(ingest_args(table, landing, table_type="MERGE_ON_READ", hoodie_conf=options))

    first = trips(DAY, range(10), ts=1)
    write_source(landing / "a.parquet", first)
    assert (ingest()["inserts"], MetaClient.open(table).properties.table_type) == (10, "MERGE_ON_READ")
    model.upsert(first)
    later = trips(DAY, range(5), ts=2)  # updates only: a log file (inserts too would rewrite the small base file)
    write_source(landing / "b.parquet", later)
    result = ingest()
    assert (result["updates"], result["inserts"]) == (5, 0), result
    model.upsert(later)
    old = trips(OLD_DAY, range(8), ts=1)
    write_source(history / f"dt={OLD_DAY}" / "part-0.parquet", old)
    backfill = BackfillSpec(base_path=table, source_path=str(history), start=OLD_DAY, end=OLD_DAY, hoodie_conf=options)
    assert job(backfill.to_argv())["commits"] == 1
    model.upsert(old)
    assert read_hudi_rs(table) == model.expected()

    compaction = job(CompactSpec(base_path=table, hoodie_conf={**options, **COMPACT_EVERY_COMMIT}).to_argv())
    assert compaction["outcome"] == "completed" and compaction["file_groups"] == 1, compaction
    clean = job(CleanSpec(base_path=table, hoodie_conf={**options, **KEEP_ONE_VERSION}).to_argv())
    assert clean["files"] > 0, clean

    # the control plane reads the table through pyarrow's S3, from the environment's endpoint and keys
    meta = MetaClient.open(table)
    timeline = meta.timeline()
    assert [i.action for i in timeline.completed_writes()] == ["deltacommit"] * 3 + ["commit"]
    assert timeline.completed_instant(compaction["instant"]) is not None
    groups = meta.fs_view(timeline).file_groups()
    assert groups and all(len(g.slices) == 1 and not g.slices[0].log_files for g in groups)  # compacted, cleaned
    # the file groups come from the metadata table on S3 (two LISTs), and name what a listing finds
    assert files_by_metadata_table(table) == files_by_listing(table)
    assert not ingest_work(table, Storage.for_uri(landing), "parquet").files  # both landing files ingested
    assert read_hudi_rs(table) == model.expected()
    assert all(s3.server.secret_key not in log.read_text() for log in logs)

    # the CLI, with the keys in its environment, on the s3a:// URI the jobs were given
    def cli(*args: str) -> str:
        done = subprocess.run([str(Path(sys.executable).parent / "hudi-ops"), *args, table], capture_output=True,
                              text=True, env={**os.environ, **s3.server.env()}, timeout=120)
        assert done.returncode == 0, done.stderr
        return done.stdout

    assert compaction["instant"] in cli("commits") and clean["instant"] in cli("cleans")
    # the bytes the clean freed, sized from the commits that wrote its base and log files
    (shown,) = [c for c in json.loads(cli("cleans", "--json")) if c["instant"] == clean["instant"]]
    assert (shown["files"], shown["bytes"]) == (clean["files"], clean["bytes"]), (shown, clean)
    rows = [json.loads(line) for line in cli("read").splitlines()]
    assert sorted(tuple(r[c] for c in COLUMNS) for r in rows) == model.expected()


@pytest.mark.long
def test_clustering_savepoint_and_restore_on_an_s3a_table_agree_with_hudis_procedures(s3, spark, tmp_path, capsys):
    """Two bulk inserts make two file groups of a day, clustering makes one, a savepoint keeps that
    state through a later upsert (ingested from a folder on S3), the restore brings it back; at each
    step hudi-rs and Spark's reader equal the model, and the control plane's commits and latest file
    slices are Hudi's own."""
    s3.configure(spark)
    table, landing, history, model = s3.uri("trips"), s3.uri("landing"), tmp_path / "history", Model()

    def job(argv: list[str]) -> dict:
        code, result = run(capsys, argv, spark)
        assert code == 0, result
        return result

    for n in range(2):
        rows = trips(OLD_DAY, range(n * 10, n * 10 + 10), ts=1)
        write_source(history / f"{n}" / f"dt={OLD_DAY}" / "part-0.parquet", rows)
        job(trips_args(BackfillSpec, table, history / f"{n}", start=OLD_DAY, end=OLD_DAY, operation="BULK_INSERT",
                       run_id=f"bulk-{n}"))
        model.upsert(rows)
    assert len(MetaClient.open(table).fs_view().file_groups()) == 2

    clustered = job(ClusterSpec(base_path=table).to_argv())
    assert clustered["outcome"] == "completed" and clustered["file_groups"] == 2, clustered
    assert len(MetaClient.open(table).fs_view().file_groups()) == 1
    assert read_hudi_rs(table) == read_spark(spark, table) == model.expected()

    saved = job(SavepointSpec(base_path=table).to_argv())
    assert saved["outcome"] == "created"
    at_savepoint = model.expected()
    later = trips(OLD_DAY, range(5), ts=2, fare=99.0)  # landed on S3 too: the ingest's source is a bucket folder
    write_source(tmp_path / "later.parquet", later)
    pafs.copy_files(str(tmp_path / "later.parquet"), f"{s3.bucket}/landing/later.parquet",
                    destination_filesystem=s3.server.settings().filesystem())
    assert job(ingest_args(table, landing))["rows"] == 5
    assert not ingest_work(table, Storage.for_uri(landing), "parquet").files  # its checkpoint names the S3 file
    assert read_hudi_rs(table) == read_spark(spark, table) == model.upsert(later).expected() != at_savepoint

    name = "s3_trips"
    spark.sql(f"CREATE TABLE {name} USING hudi LOCATION '{table}'")
    try:
        meta = MetaClient.open(table)
        ours = {(c.instant, c.action, c.bytes, c.writes) for c in commit_stats(meta.timeline())}
        hudis = {(r.commit_time, r.action, r.total_bytes_written, r.total_records_written)
                 for r in spark.sql(f"CALL show_commits(table => '{name}', limit => 100)").collect()}
        assert ours == hudis and len(ours) == 4  # two bulk inserts, the clustering, the upsert
        slices = {(g.partition, g.file_id, g.base_instant, g.base_file)
                  for g in file_group_summaries(meta, meta.timeline())}
        hudi_slices = {(r.partition, r.file_id, r.base_instant, r.data_file.rsplit("/", 1)[-1])
                       for r in spark.sql(f"CALL show_fsview_latest(path => '{table}', limit => 100)").collect()}
        assert slices == hudi_slices and len(slices) == 1
    finally:
        spark.sql(f"DROP TABLE {name}")  # the catalog's entry only: the table on S3 stays

    restored = job(RestoreSpec(base_path=table, savepoint=saved["instant"]).to_argv())
    assert restored["outcome"] == "restored" and len(restored["details"]["undone"]) == 1, restored
    assert read_hudi_rs(table) == read_spark(spark, table) == at_savepoint
