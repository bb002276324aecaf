"""Each landing file is ingested exactly once, whatever its modification time: a file copied in with its
old time (`cp -p`), two producers renaming out of order, an S3 multipart upload (dated by its start).
The ingest runs in this process with the shared session; every table is judged by hudi-rs and Spark's
Hudi reader against a plain model of the files landed."""

from __future__ import annotations

import datetime as dt
import json
import os

import boto3
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from hudi_ops.format.meta_client import MetaClient
from hudi_ops.read.pipeline_metadata import INGEST_CHECKPOINT_KEY
from hudi_ops.sources.files import ingest_work
from hudi_ops.spark.__main__ import main
from hudi_ops.storage import Storage
from tests.integration.test_spark_jobs import DAY1, DAY2, NoSpark, ingest_args, run
from tests.tables import TRIPS, Model, job_result, read_hudi_rs, read_spark, trips, write_source


def land_at(path, rows, mtime: float):
    """A source file whose modification time is `mtime`, as `cp -p` or a late rename leaves it."""
    write_source(path, rows)
    os.utime(path, (mtime, mtime))


def judged(spark, table):
    rows = read_hudi_rs(table)
    assert rows == read_spark(spark, table), "hudi-rs and Spark's Hudi reader disagree"
    return rows


def test_a_file_landing_with_an_older_time_than_the_checkpoint_is_ingested_by_the_next_run_once(
        spark, tmp_path, capsys):
    table, landing = tmp_path / "trips", tmp_path / "landing"
    model = Model()
    a, b, c = trips(DAY1, range(10), ts=1), trips(DAY1, range(10, 20), ts=1), trips(DAY2, range(10), ts=1)
    first = write_source(landing / "a.parquet", a).stat().st_mtime
    second = write_source(landing / "b.parquet", b).stat().st_mtime
    code, result = run(capsys, ingest_args(table, landing), spark)
    assert code == 0 and result["inserts"] == 20 and result["outcome"] == "committed", result
    model.upsert(a).upsert(b)

    # c lands after the checkpoint with a time between a's and b's: a time watermark alone never takes it
    land_at(landing / "c.parquet", c, (first + second) / 2)
    work = ingest_work(table, Storage.for_uri(landing), "parquet")
    assert [f.path for f in work.files] == [f.path for f in work.late] == ["c.parquet"]
    code, result = run(capsys, ingest_args(table, landing), spark)
    assert code == 0 and result["inserts"] == 10 and result["commits"] == 1, result
    assert judged(spark, table) == model.upsert(c).expected()

    code, again = run(capsys, ingest_args(table, landing), NoSpark())  # every file taken: no Spark, no commit
    assert code == 0 and again["commits"] == 0 and again["instant"] is None, again
    assert "nothing to ingest: 0 new source file(s)" in again["reason"]
    assert judged(spark, table) == model.expected()


def test_many_late_files_and_a_bound_per_commit_take_every_file_once_in_steps(spark, tmp_path, capsys):
    """A catch-up after an outage commits in steps of `--source-limit-files`; files that landed late
    among them are taken once, in the order of their times."""
    table, landing = tmp_path / "trips", tmp_path / "landing"
    model = Model()
    rows = {n: trips(DAY1, range(10 * n, 10 * n + 10), ts=1) for n in range(7)}
    for n in (0, 1, 2):
        write_source(landing / f"{n}.parquet", rows[n])
        model.upsert(rows[n])
    assert run(capsys, ingest_args(table, landing), spark)[0] == 0
    oldest = (landing / "0.parquet").stat().st_mtime
    for n in (3, 4):  # late: older than everything ingested
        land_at(landing / f"{n}.parquet", rows[n], oldest - 60 * n)
    for n in (5, 6):
        write_source(landing / f"{n}.parquet", rows[n])
    for n in (3, 4, 5, 6):
        model.upsert(rows[n])
    code, result = run(capsys, ingest_args(table, landing, source_limit_files=3), spark)
    assert code == 0 and result["commits"] == 2 and result["inserts"] == 40, result
    meta = MetaClient.open(table)
    batches = [sorted(json.loads(m.extra_metadata[INGEST_CHECKPOINT_KEY])["files"])
               for _, m in meta.timeline().newest_writes()]
    assert batches == [["6.parquet"], ["3.parquet", "4.parquet", "5.parquet"], ["0.parquet", "1.parquet", "2.parquet"]]
    assert judged(spark, table) == model.expected()
    assert not ingest_work(table, Storage.for_uri(landing), "parquet").files


@pytest.mark.parametrize("time", ["its old time", "a new time"])
def test_a_file_rewritten_after_it_was_ingested_is_reported_and_not_read_again(spark, tmp_path, capsys, time):
    table, landing = tmp_path / "trips", tmp_path / "landing"
    model = Model()
    a = trips(DAY1, range(10), ts=1)
    write_source(landing / "a.parquet", a)
    assert run(capsys, ingest_args(table, landing), spark)[0] == 0
    model.upsert(a)
    stamp = (landing / "a.parquet").stat().st_mtime
    b = trips(DAY2, range(5), ts=1)
    if time == "a new time":  # rewritten after b landed: the newest file of the folder
        write_source(landing / "b.parquet", b)
        write_source(landing / "a.parquet", trips(DAY1, range(50), ts=9))
    else:
        land_at(landing / "a.parquet", trips(DAY1, range(50), ts=9), stamp)  # the same name and time, new content
        write_source(landing / "b.parquet", b)
    code, result = run(capsys, ingest_args(table, landing), spark)
    assert code == 0 and result["inserts"] == 5 and result["updates"] == 0, result
    (warning,) = result["warnings"]
    assert "a.parquet was rewritten after it was ingested" in warning and "under a new name" in warning
    assert judged(spark, table) == model.upsert(b).expected()

    code, again = run(capsys, ingest_args(table, landing), NoSpark())
    assert code == 0 and again["commits"] == 0 and again["warnings"] == [], again  # reported once, by its commit


def test_deleting_ingested_files_from_the_landing_folder_reingests_nothing(spark, tmp_path, capsys):
    """A landing folder's retention deletes old files: the ingest's records still account for the rest."""
    table, landing = tmp_path / "trips", tmp_path / "landing"
    model = Model()
    for n in range(3):
        rows = trips(DAY1, range(10 * n, 10 * n + 10), ts=1)
        write_source(landing / f"{n}.parquet", rows)
        model.upsert(rows)
        assert run(capsys, ingest_args(table, landing), spark)[0] == 0
    (landing / "0.parquet").unlink()
    code, again = run(capsys, ingest_args(table, landing), NoSpark())
    assert code == 0 and again["commits"] == 0, again
    assert judged(spark, table) == model.expected()


@pytest.mark.long
def test_a_multipart_upload_dated_by_its_start_is_ingested_once_on_s3(spark, s3, capsys, tmp_path):
    """S3 dates a multipart upload's object by the time the upload began: one begun before files that
    were ingested, and completed after, lands with an older time than the checkpoint. The local S3
    server (moto) dates it at completion; the test dates it as S3 does."""
    s3.configure(spark)
    table, landing = s3.uri("trips"), s3.uri("landing")
    client = boto3.client("s3", endpoint_url=s3.server.endpoint)
    model = Model()
    late = trips(DAY2, range(10), ts=1)
    began = dt.datetime.now(dt.UTC).replace(tzinfo=None) - dt.timedelta(minutes=2)  # a large upload's start
    upload = client.create_multipart_upload(Bucket=s3.bucket, Key="landing/c.parquet")["UploadId"]
    for name, rows in (("a", trips(DAY1, range(10), ts=1)), ("b", trips(DAY1, range(10, 20), ts=1))):
        local = write_source(tmp_path / f"{name}.parquet", rows)
        client.upload_file(str(local), s3.bucket, f"landing/{name}.parquet")
        model.upsert(rows)
    assert run(capsys, ingest_args(table, landing), spark)[0] == 0

    sink = pa.BufferOutputStream()
    pq.write_table(pa.Table.from_pylist(late, schema=TRIPS), sink)
    part = client.upload_part(Bucket=s3.bucket, Key="landing/c.parquet", UploadId=upload, PartNumber=1,
                              Body=sink.getvalue().to_pybytes())
    client.complete_multipart_upload(Bucket=s3.bucket, Key="landing/c.parquet", UploadId=upload,
                                     MultipartUpload={"Parts": [{"ETag": part["ETag"], "PartNumber": 1}]})
    _date_as_s3_does(s3, "landing/c.parquet", began)
    assert client.head_object(Bucket=s3.bucket, Key="landing/c.parquet")["LastModified"].replace(tzinfo=None) < \
        client.head_object(Bucket=s3.bucket, Key="landing/b.parquet")["LastModified"].replace(tzinfo=None)

    code, result = run(capsys, ingest_args(table, landing), spark)
    assert code == 0 and result["inserts"] == 10, result
    assert main(ingest_args(table, landing), spark=NoSpark()) == 0
    assert job_result(capsys.readouterr().out)["commits"] == 0
    assert judged(spark, table) == model.upsert(late).expected()


def _date_as_s3_does(s3, key: str, began: dt.datetime) -> None:
    """Give the object the LastModified S3 gives a multipart upload: the time it began."""
    from moto.core import DEFAULT_ACCOUNT_ID
    from moto.s3.models import s3_backends

    stored = s3_backends[DEFAULT_ACCOUNT_ID]["aws"].buckets[s3.bucket].keys.get(key)
    stored.last_modified = began


@pytest.mark.long
def test_the_ingests_records_are_read_back_from_the_archived_timeline(spark, tmp_path, capsys):
    """The files an ingest took stay known once Hudi has archived the commits that took them: a late
    file is told from the old ones by commits read back from the archived timeline."""
    table, landing = tmp_path / "trips", tmp_path / "landing"
    # Hudi archives beyond 3 completed commits, down to 2 (the cleaner keeps 1)
    archival = {"hoodie.keep.min.commits": "2", "hoodie.keep.max.commits": "3",
                "hoodie.cleaner.commits.retained": "1", "hoodie.metadata.compact.max.delta.commits": "1"}
    model = Model()
    first = None
    for n in range(6):
        rows = trips(DAY1, range(10 * n, 10 * n + 10), ts=1)
        write_source(landing / f"{n}.parquet", rows)
        model.upsert(rows)
        code, result = run(capsys, ingest_args(table, landing, hoodie_conf=archival), spark)
        assert code == 0 and result["inserts"] == 10, result
        first = first or result["instant"]
    assert first not in {i.requested_time for i in MetaClient.open(table).timeline()}  # archived
    (landing / "1.parquet").unlink()  # the listing no longer matches the checkpoint: the records are read
    late = trips(DAY2, range(5), ts=1)
    land_at(landing / "late.parquet", late, (landing / "0.parquet").stat().st_mtime - 60)
    work = ingest_work(table, Storage.for_uri(landing), "parquet")
    assert [f.path for f in work.files] == ["late.parquet"] and not work.changed
    code, result = run(capsys, ingest_args(table, landing, hoodie_conf=archival), spark)
    assert code == 0 and result["inserts"] == 5 and result["updates"] == 0, result
    assert judged(spark, table) == model.upsert(late).expected()
