"""Tables on object storage: Hudi's writer through s3a, as a spark-submit of the hudi-ops job, on a
real local S3 server (moto's), read back by hudi-rs and by the control plane through pyarrow's S3.
Credentials reach the job through its environment only, never its command line."""

from __future__ import annotations

import os
import subprocess
import sys

import pyarrow as pa
import pytest

from hudi_ops.demo.s3_server import S3Server
from hudi_ops.format.meta_client import MetaClient
from hudi_ops.read.ingest_work import ingest_work
from hudi_ops.spark.s3a import s3a_conf, s3a_jars
from hudi_ops.spark.submit import spark_submit_command
from hudi_ops.storage import Storage
from tests.integration.processes import JOB_CONF, SPARK_SUBMIT
from tests.integration.test_spark_jobs import ingest_args
from tests.tables import COLUMNS, Model, job_result, trips, write_source

DAY = "2026-11-20"


@pytest.fixture
def s3(monkeypatch):
    with S3Server() as server:
        server.create_bucket("lake")
        for key, value in server.env().items():  # for this process's readers: pyarrow, hudi-rs
            monkeypatch.setenv(key, value)
        yield server


def submit(server: S3Server, job_args: list[str], log) -> tuple[list[str], int, dict]:
    command = spark_submit_command(job_args, master="local[1]", spark_submit=SPARK_SUBMIT, jars=s3a_jars(),
                                   conf={**JOB_CONF, **s3a_conf(server.endpoint, path_style=True)})
    env = {**os.environ, **server.env(), "PYSPARK_PYTHON": sys.executable}
    with log.open("w") as out:
        code = subprocess.run(command, stdout=out, stderr=subprocess.STDOUT, env=env, timeout=600).returncode
    return command, code, job_result(log.read_text())


def read_hudi_rs_s3(server: S3Server, uri: str) -> list[tuple]:
    import hudi

    table = hudi.HudiTable(uri.replace("s3a://", "s3://"), {
        "aws_endpoint_url": server.endpoint, "aws_access_key_id": server.access_key,
        "aws_secret_access_key": server.secret_key, "aws_region": "us-east-1", "aws_allow_http": "true"})
    rows = pa.Table.from_batches(table.read()).select(list(COLUMNS)).to_pylist()
    return sorted(tuple(r[c] for c in COLUMNS) for r in rows)


def test_ingests_into_an_s3a_table_read_back_by_hudi_rs_and_the_control_plane(s3, tmp_path):
    table, landing, model = "s3a://lake/warehouse/trips", tmp_path / "landing", Model()
    first = trips(DAY, range(10), ts=1)
    write_source(landing / "a.parquet", first)
    command, code, result = submit(s3, ingest_args(table, landing), tmp_path / "first.log")
    assert code == 0 and (result["commits"], result["inserts"]) == (1, 10), result
    model.upsert(first)

    later = trips(DAY, range(5, 15), ts=2)
    write_source(landing / "b.parquet", later)
    _, code, result = submit(s3, ingest_args(table, landing), tmp_path / "second.log")
    assert code == 0 and (result["updates"], result["inserts"]) == (5, 5), result
    model.upsert(later)

    assert read_hudi_rs_s3(s3, table) == model.expected()
    meta = MetaClient.open(table)  # pyarrow's S3, from the environment's endpoint and keys
    writes = meta.timeline().completed_writes()
    assert len(writes) == 2 and writes[-1].requested_time == result["instant"]
    assert not ingest_work(table, Storage.for_uri(landing), "parquet").files  # both files ingested
    # the keys went through the environment: not on the command line, not in the job's output
    for secret in (s3.secret_key, s3.access_key):
        assert not any(secret in arg for arg in command)
        assert secret not in (tmp_path / "first.log").read_text() + (tmp_path / "second.log").read_text()
