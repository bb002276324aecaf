"""Tables on object storage: Hudi's writer and table services through s3a, as spark-submits of the
hudi-ops jobs, on a real local S3 server (moto's), read back by hudi-rs and by the control plane
through pyarrow's S3. Credentials reach the jobs through their environment only, never their command
line or output."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pytest

from hudi_ops.demo.s3_server import S3Server
from hudi_ops.format.meta_client import MetaClient
from hudi_ops.job_specs import BackfillSpec, CleanSpec, CompactSpec
from hudi_ops.read.ingest_work import ingest_work
from hudi_ops.spark.s3a import s3a_conf, s3a_jars
from hudi_ops.storage import Storage
from tests.integration.lock_options import occ_options
from tests.integration.processes import Job
from tests.integration.test_spark_jobs import ingest_args
from tests.tables import COLUMNS, Model, trips, write_source

DAY, OLD_DAY = "2026-11-20", "2026-11-10"
COMPACT_EVERY_COMMIT = {"hoodie.compact.inline.max.delta.commits": "1"}
KEEP_ONE_VERSION = {"hoodie.cleaner.policy": "KEEP_LATEST_FILE_VERSIONS", "hoodie.cleaner.fileversions.retained": "1"}


@pytest.fixture
def s3(monkeypatch):
    with S3Server() as server:
        server.create_bucket("lake")
        for key, value in server.env().items():  # for this process's readers: pyarrow, hudi-rs
            monkeypatch.setenv(key, value)
        yield server


def submit(server: S3Server, job_args: list[str], log) -> tuple[list[str], int, dict]:
    job = Job.start(job_args, log, jars=s3a_jars(), conf=s3a_conf(server.settings()),
                    env=server.env())
    return list(job.process.args), *job.finish(timeout_s=600)


def read_hudi_rs_s3(server: S3Server, uri: str) -> list[tuple]:
    import hudi

    table = hudi.HudiTable(uri.replace("s3a://", "s3://"), {
        "aws_endpoint_url": server.endpoint, "aws_access_key_id": server.access_key,
        "aws_secret_access_key": server.secret_key, "aws_region": "us-east-1", "aws_allow_http": "true"})
    rows = pa.Table.from_batches(table.read()).select(list(COLUMNS)).to_pylist()
    return sorted(tuple(r[c] for c in COLUMNS) for r in rows)


def test_ingest_backfill_compaction_and_clean_on_an_s3a_table_under_the_zookeeper_lock(s3, tmp_path, zookeeper):
    """A MERGE_ON_READ table on S3: two ingests (the second updates, into log files), a backfill day,
    then Hudi's compaction and a clean as the services DAG runs them; hudi-rs reads the model."""
    table, landing, history, model = "s3a://lake/warehouse/trips", tmp_path / "landing", tmp_path / "history", Model()
    options = occ_options(zookeeper.url)
    logs: list[Path] = []

    def job(argv: list[str]) -> dict:
        logs.append(tmp_path / f"{len(logs)}-{argv[0]}.log")
        command, code, result = submit(s3, argv, logs[-1])
        assert code == 0, logs[-1].read_text()[-3000:]
        for secret in (s3.secret_key, s3.access_key):  # the keys went through the environment only
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
    assert read_hudi_rs_s3(s3, table) == model.expected()

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
    assert not ingest_work(table, Storage.for_uri(landing), "parquet").files  # both landing files ingested
    assert read_hudi_rs_s3(s3, table) == model.expected()
    assert all(s3.secret_key not in log.read_text() for log in logs)

    # the CLI, with the keys in its environment, on the s3a:// URI the jobs were given
    def cli(*args: str) -> str:
        done = subprocess.run([str(Path(sys.executable).parent / "hudi-ops"), *args, table], capture_output=True,
                              text=True, env={**os.environ, **s3.env()}, timeout=120)
        assert done.returncode == 0, done.stderr
        return done.stdout

    assert compaction["instant"] in cli("commits") and clean["instant"] in cli("cleans")
    rows = [json.loads(line) for line in cli("read").splitlines()]
    assert sorted(tuple(r[c] for c in COLUMNS) for r in rows) == model.expected()
