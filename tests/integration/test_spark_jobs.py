"""The `ingest` and `backfill` jobs on Apache Hudi's writer, run in this process with the shared session.

Every table is judged by hudi-rs and by Spark's Hudi reader against a plain model of the batches.
"""

from __future__ import annotations

import contextlib
import io
import json
import subprocess
import sys

import pytest

from hudi_ops.format.meta_client import MetaClient
from hudi_ops.job_specs import BackfillSpec, IngestSpec, WriteSpec
from hudi_ops.read.table_overview import ROLLED_BACK, commit_stats, instant_spans
from hudi_ops.spark.__main__ import main
from tests.integration.lock_options import await_stopped_writes_expired, occ_options
from tests.tables import TRIPS, Model, job_result, read_hudi_rs, read_spark, tree, trips, write_source

DAY1, DAY2 = "2026-11-20", "2026-11-21"
#: the trips table's settings, as the writers' specs take them
TRIPS_TABLE = {"table_name": "trips", "record_key_field": "trip_id", "partition_path_field": "dt",
               "ordering_field": "ts"}


def trips_args(job: type[WriteSpec], table, source, **fields) -> list[str]:
    """The arguments of a write (IngestSpec or BackfillSpec) from `source` into the trips table at `table`;
    `fields` are the spec's, over the trips table's settings."""
    return job(**{"base_path": str(table), "source_path": str(source), **TRIPS_TABLE, **fields}).to_argv()


def ingest_args(table, source, **fields) -> list[str]:
    """An ingest of `source` into the trips table; `fields` are IngestSpec's (hoodie_conf, operation, ...)."""
    return trips_args(IngestSpec, table, source, **fields)


def run(capsys, argv, spark):
    code = main(argv, spark=spark)
    return code, job_result(capsys.readouterr().out)


def run_captured(argv, spark) -> tuple[int, str]:
    """A job in this process where pytest's capsys is not at hand (a fixture wider than one test): its exit
    code and its output."""
    with contextlib.redirect_stdout(io.StringIO()) as out:
        code = main(argv, spark=spark)
    return code, out.getvalue()


def failed_write(spark, capsys, tmp_path, options):
    """A table whose last write, with `options`, failed mid-way (a null key: Hudi leaves its instant
    inflight); returns (table, the failed instant, the model)."""
    table, source = tmp_path / "trips", tmp_path / "landing"
    model = Model().upsert(trips(DAY1, range(10), ts=1))
    write_source(source / "a.parquet", trips(DAY1, range(10), ts=1))
    assert run(capsys, ingest_args(table, source, hoodie_conf=options), spark)[0] == 0
    bad = trips(DAY1, range(10, 12), ts=2)
    write_source(source / "b.parquet", [*bad, {**bad[0], "trip_id": None}])
    assert run(capsys, ingest_args(table, source, hoodie_conf=options), spark)[0] == 2
    (failed,) = [i.requested_time for i in MetaClient.open(table).timeline().pending]
    return table, failed, model


class NoSpark:
    """A session that must not be used: a run with nothing to do never starts Spark."""

    def __getattr__(self, name):
        raise AssertionError(f"Spark was used ({name}) by a run that had nothing to do")


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_ingest_writes_a_version_9_table_that_both_readers_read_as_the_model(spark, tmp_path, capsys, table_type):
    table, source = tmp_path / "trips", tmp_path / "landing"
    model = Model()
    first = trips(DAY1, range(40), ts=1) + trips(DAY2, range(40), ts=1)
    write_source(source / "a.parquet", first)
    code, result = run(capsys, ingest_args(table, source, table_type=table_type), spark)
    assert code == 0 and result["commits"] == 1 and result["inserts"] == 80 and result["operation"] == "UPSERT"
    model.upsert(first)

    inserts = trips(DAY2, range(40, 50), ts=2)
    update = trips(DAY1, range(0, 40, 4), ts=2, fare=99.0) + inserts
    write_source(source / "b.parquet", update)
    code, result = run(capsys, ingest_args(table, source), spark)  # the table's type, from hoodie.properties
    assert code == 0 and (result["updates"], result["inserts"]) == (10, 10)
    model.upsert(update)

    assert read_hudi_rs(table) == read_spark(spark, table) == model.expected()
    meta = MetaClient.open(table)
    props = meta.properties
    assert (props.table_version, props.table_type) == (9, table_type)
    assert "files" in props.metadata_partitions and (table / ".hoodie" / "metadata").is_dir()  # Hudi's default
    commits = commit_stats(meta.timeline())
    assert [c.instant for c in commits][-1] == result["instant"]
    assert {c.action for c in commits} == {"deltacommit" if table_type == "MERGE_ON_READ" else "commit"}
    if table_type == "MERGE_ON_READ":  # updates went to log files, which read-optimized queries skip
        assert any(g.latest_slice.log_files for g in meta.fs_view().file_groups() if g.latest_slice)
        assert read_hudi_rs(table, read_optimized=True) == Model().upsert(first).upsert(inserts).expected()


def test_ingest_takes_only_new_files_and_an_idle_run_starts_no_spark(spark, tmp_path, capsys):
    table, source = tmp_path / "trips", tmp_path / "landing"
    write_source(source / "a.parquet", trips(DAY1, range(10), ts=1))
    assert run(capsys, ingest_args(table, source), spark)[0] == 0
    before = tree(table)

    code, idle = run(capsys, ingest_args(table, source), NoSpark())
    assert code == 0 and idle["instant"] is None and idle["commits"] == 0
    assert "nothing to ingest" in idle["reason"] and idle["checkpoint"].endswith(":a.parquet")
    assert tree(table) == before

    write_source(source / "b.parquet", trips(DAY1, range(10, 15), ts=1))
    code, result = run(capsys, ingest_args(table, source), spark)
    assert code == 0 and result["inserts"] == 5 and result["checkpoint"].endswith(":b.parquet")


def test_the_ingest_checkpoint_is_found_past_backfill_commits_and_each_source_keeps_its_own(spark, tmp_path, capsys):
    table, landing, history, other = tmp_path / "trips", tmp_path / "landing", tmp_path / "history", tmp_path / "o"
    model = Model()
    batch = trips(DAY2, range(20), ts=5)
    write_source(landing / "a.parquet", batch)
    assert run(capsys, ingest_args(table, landing), spark)[0] == 0
    for day in ("2026-11-01", "2026-11-02"):
        rows = trips(day, range(30), ts=1)
        write_source(history / f"dt={day}" / "part-0.parquet", rows)
        model.upsert(rows)
    backfill = BackfillSpec(base_path=str(table), source_path=str(history), start="2026-11-01", end="2026-11-03")
    code, backfilled = run(capsys, backfill.to_argv(), spark)
    assert code == 0 and backfilled["commits"] == 2 and backfilled["checkpoint"] == "2026-11-02"
    model.upsert(batch)

    # the newest commits are the backfill's: the ingest searches back past them and finds nothing new
    code, idle = run(capsys, ingest_args(table, landing), NoSpark())
    assert code == 0 and idle["instant"] is None
    # another source into the same table starts from its own beginning
    other_rows = trips(DAY1, range(5), ts=1)
    write_source(other / "x.parquet", other_rows)
    code, result = run(capsys, ingest_args(table, other), spark)
    assert code == 0 and result["inserts"] == 5
    model.upsert(other_rows)
    assert read_hudi_rs(table) == read_spark(spark, table) == model.expected()


def test_backfill_commits_a_day_at_a_time_and_resumes_after_its_last_day(spark, tmp_path, capsys):
    table, history = tmp_path / "trips", tmp_path / "history"
    model = Model()
    for day in (DAY1, DAY2):
        rows = trips(day, range(25), ts=1)
        write_source(history / f"dt={day}" / "part-0.parquet", rows)
        model.upsert(rows)
    argv = trips_args(BackfillSpec, table, history, start=DAY1, end=DAY2)
    code, result = run(capsys, argv, spark)
    assert code == 0 and result["commits"] == 2 and result["inserts"] == 50 and result["checkpoint"] == DAY2
    commits = commit_stats(MetaClient.open(table).timeline())
    assert [c.partitions for c in commits] == [1, 1]  # one commit per day

    code, again = run(capsys, argv, NoSpark())  # the run did the window: this attempt writes nothing
    assert code == 0 and again["commits"] == 0, again
    assert again["outcome"] == "already committed" and again["instant"] == result["instant"], again
    assert read_hudi_rs(table) == read_spark(spark, table) == model.expected()


@pytest.mark.parametrize("several_writers", [pytest.param(False, marks=pytest.mark.long), True])
def test_a_backfill_beside_other_writers_puts_its_inserts_into_file_groups_of_its_own(
        spark, tmp_path, capsys, zookeeper, several_writers):
    """Hudi packs a write's inserts into the partition's small files. A backfill on a table with several
    writers does not: the small files are the ones the ingest writes into, and two writers' inserts into
    one file group are a write conflict for one of them. A single writer's backfill packs as before."""
    table, landing, history = tmp_path / "trips", tmp_path / "landing", tmp_path / "history"
    options = occ_options(zookeeper.url) if several_writers else {}
    rows = trips(DAY1, range(10), ts=1)
    write_source(landing / "a.parquet", rows)
    assert run(capsys, ingest_args(table, landing, hoodie_conf=options), spark)[0] == 0
    model = Model().upsert(rows)
    (ingested,) = MetaClient.open(table).fs_view().file_groups()

    old = trips(DAY1, range(100, 110), ts=1)
    write_source(history / f"dt={DAY1}" / "part-0.parquet", old)
    backfill = trips_args(BackfillSpec, table, history, start=DAY1, end=DAY1, hoodie_conf=options)
    code, result = run(capsys, backfill, spark)
    assert code == 0 and result["inserts"] == len(old), result.get("message")
    groups = {g.id: g for g in MetaClient.open(table).fs_view().file_groups()}
    if several_writers:
        assert len(groups) == 2 and groups[ingested.id].slices == ingested.slices
    else:
        assert list(groups) == [ingested.id] and groups[ingested.id].slices != ingested.slices
    assert read_hudi_rs(table) == read_spark(spark, table) == model.upsert(old).expected()


@pytest.fixture
def seeded(spark, tmp_path, capsys):
    """A table with one ingest, and a landing folder for the next file."""
    table, source = tmp_path / "trips", tmp_path / "landing"
    write_source(source / "a.parquet", trips(DAY1, range(10), ts=1))
    assert run(capsys, ingest_args(table, source), spark)[0] == 0
    return table, source


#: the source's schema, the ingest's spec fields (or raw flags, for a value IngestSpec itself refuses), the message
BAD_INPUT = {
    "a source without the key field": (
        TRIPS.remove(0), {}, "no record key field 'trip_id'"),
    "a source without the ordering field": (
        TRIPS.remove(2), {}, "no ordering field 'ts'"),
    "a type the table cannot take": (
        TRIPS.set(2, TRIPS.field("ts").with_type(__import__("pyarrow").string())), {},
        "field 'ts' is string in the source (1 file(s)) but int64 in the table"),
    "a source without a table column": (
        TRIPS.remove(3), {}, "lacks the table's column 'fare'"),
    "an unknown operation": (TRIPS, ["--op", "UPSRT"], "--op 'UPSRT' is not valid"),
    "a record key that is not the table's": (
        TRIPS, {"record_key_field": "fare"}, "--record-key-field / hoodie.datasource.write.recordkey.field disagree"),
}


@pytest.mark.parametrize("case", sorted(BAD_INPUT))
def test_bad_input_exits_2_naming_the_field_and_changes_nothing(spark, seeded, capsys, case):
    table, source = seeded
    schema, flags, message = BAD_INPUT[case]
    rows = [{k: (str(v) if k == "ts" and schema.field(k).type != TRIPS.field("ts").type else v)
             for k, v in r.items() if k in schema.names} for r in trips(DAY1, range(5), ts=2)]
    write_source(source / "b.parquet", rows, schema)
    before = tree(table)
    argv = ingest_args(table, source, **flags) if isinstance(flags, dict) else [*ingest_args(table, source), *flags]
    code, result = run(capsys, argv, spark)
    assert code == 2 and result["status"] == "failed" and message in result["message"]
    assert tree(table) == before


def test_a_window_that_ends_before_it_starts_exits_2_before_spark_starts(tmp_path, capsys):
    # raw arguments: BackfillSpec would refuse the window here, before the job could
    code, result = run(capsys, ["backfill", "--target-base-path", str(tmp_path / "t"), "--source-path",
                                str(tmp_path), "--record-key-field", "id", "--start", DAY2, "--end", DAY1], NoSpark())
    assert code == 2 and "ends (2026-11-20) before it starts (2026-11-21)" in result["message"]
    assert not (tmp_path / "t").exists()


@pytest.mark.spark  # a JVM of its own
def test_python_m_hudi_ops_spark_runs_a_job_in_a_local_session_with_hudis_jars(tmp_path):
    table, source = tmp_path / "trips", tmp_path / "landing"
    write_source(source / "a.parquet", trips(DAY1, range(7), ts=1))
    done = subprocess.run([sys.executable, "-m", "hudi_ops.spark", *ingest_args(table, source)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert job_result(done.stdout)["inserts"] == 7
    assert read_hudi_rs(table) == Model().upsert(trips(DAY1, range(7), ts=1)).expected()


def test_a_null_key_hudi_refuses_mid_write_exits_2_and_its_instant_is_rolled_back_lazily(
        spark, tmp_path, capsys, zookeeper):
    table, source = tmp_path / "trips", tmp_path / "landing"
    occ = occ_options(zookeeper.url)
    model = Model().upsert(trips(DAY1, range(10), ts=1))
    write_source(source / "a.parquet", trips(DAY1, range(10), ts=1))
    assert run(capsys, ingest_args(table, source, hoodie_conf=occ), spark)[0] == 0
    before = MetaClient.open(table).timeline()

    batch = trips(DAY1, range(10, 15), ts=2)
    write_source(source / "b.parquet", [*batch, {**batch[0], "trip_id": None}])
    code, result = run(capsys, ingest_args(table, source, hoodie_conf=occ), spark)
    assert code == 2 and "record key field 'trip_id' is null or empty" in result["message"]
    after = MetaClient.open(table).timeline()
    assert after.completed == before.completed  # no completed instant added
    (failed,) = [i.requested_time for i in after.pending]  # Hudi's inflight leftovers, for the next writer
    assert read_hudi_rs(table) == model.expected()

    write_source(source / "b.parquet", batch)  # the source is fixed
    await_stopped_writes_expired(table)
    code, result = run(capsys, ingest_args(table, source, hoodie_conf=occ), spark)
    assert code == 0 and result["inserts"] == 5
    assert read_hudi_rs(table) == read_spark(spark, table) == model.upsert(batch).expected()
    meta = MetaClient.open(table)
    spans = {s.requested_time: s.status for s in instant_spans(meta.timeline(), meta.commit_action)}
    assert spans[failed] == ROLLED_BACK


def test_the_ingest_checkpoint_is_found_after_hudi_archived_its_commit(spark, tmp_path, capsys):
    table, landing, history = tmp_path / "trips", tmp_path / "landing", tmp_path / "history"
    # Hudi archives beyond 3 completed commits, down to 2 (the cleaner keeps 1)
    archival = {"hoodie.keep.min.commits": "2", "hoodie.keep.max.commits": "3",
                "hoodie.cleaner.commits.retained": "1", "hoodie.metadata.compact.max.delta.commits": "1"}
    write_source(landing / "a.parquet", trips(DAY1, range(10), ts=1))
    code, first = run(capsys, ingest_args(table, landing, hoodie_conf=archival), spark)
    assert code == 0
    days = [f"2026-10-{d:02d}" for d in range(1, 7)]
    for day in days:
        write_source(history / f"dt={day}" / "part-0.parquet", trips(day, range(5), ts=1))
    backfill = BackfillSpec(base_path=str(table), source_path=str(history), start=days[0], end=days[-1],
                            hoodie_conf=archival)
    code, _ = run(capsys, backfill.to_argv(), spark)
    assert code == 0
    meta = MetaClient.open(table)
    assert first["instant"] not in {i.requested_time for i in meta.timeline()}  # archived
    assert first["instant"] in {i.requested_time for i in meta.archived_timeline()}

    code, idle = run(capsys, ingest_args(table, landing, hoodie_conf=archival), NoSpark())
    assert code == 0 and idle["instant"] is None and idle["checkpoint"].endswith(":a.parquet")
    write_source(landing / "b.parquet", trips(DAY1, range(10, 12), ts=1))
    code, result = run(capsys, ingest_args(table, landing, hoodie_conf=archival), spark)
    assert code == 0 and result["inserts"] == 2


def test_a_non_partitioned_table_from_json_takes_inserts_and_then_deletes_by_key(spark, tmp_path, capsys):
    table, landing, gone = tmp_path / "accounts", tmp_path / "landing", tmp_path / "deletes"
    rows = [{"id": f"a{i}", "ts": 1, "balance": float(i)} for i in range(20)]
    landing.mkdir()
    (landing / "a.json").write_text("\n".join(json.dumps(r) for r in rows))
    accounts = {"base_path": str(table), "table_name": "accounts", "record_key_field": "id", "ordering_field": "ts",
                "source_format": "json"}
    code, result = run(capsys, IngestSpec(**accounts, source_path=str(landing), operation="INSERT").to_argv(), spark)
    assert code == 0 and (result["operation"], result["inserts"]) == ("INSERT", 20)
    assert MetaClient.open(table).properties.partition_fields == ()

    gone.mkdir()  # a delete names records by key only
    (gone / "d.json").write_text("\n".join(json.dumps({"id": f"a{i}"}) for i in range(0, 20, 4)))
    code, result = run(capsys, IngestSpec(**accounts, source_path=str(gone), operation="DELETE").to_argv(), spark)
    assert code == 0 and (result["operation"], result["deletes"]) == ("DELETE", 5)
    kept = sorted((r["id"], r["ts"], r["balance"]) for r in rows if int(r["id"][1:]) % 4)
    columns = ("id", "ts", "balance")
    assert read_hudi_rs(table, columns) == read_spark(spark, table, columns) == kept


def test_a_backfill_takes_the_day_from_the_folder_when_the_files_lack_it(spark, tmp_path, capsys):
    table, history = tmp_path / "trips", tmp_path / "history"
    for day in (DAY1, DAY2):
        rows = [{k: v for k, v in r.items() if k != "dt"} for r in trips(day, range(3), ts=1)]
        write_source(history / f"dt={day}" / "part-0.parquet", rows, TRIPS.remove(1))
    code, result = run(capsys, trips_args(BackfillSpec, table, history, start=DAY1, end=DAY2), spark)
    assert code == 0 and result["inserts"] == 6
    expected = Model().upsert(trips(DAY1, range(3), ts=1) + trips(DAY2, range(3), ts=1)).expected()
    assert read_hudi_rs(table) == read_spark(spark, table) == expected  # `dt` a string, as in the folder names
