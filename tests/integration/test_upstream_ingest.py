"""A derived table fed by the commits of an upstream Hudi table (`ingest --source-kind hudi`, the FAQ's
incremental processing): upserts and deletes arrive, table services' commits are no work, a transform
applies, and an upstream whose cleaner passed the checkpoint fails naming both instants. Judged by
hudi-rs and Spark's Hudi reader against a model of the upstream's rows."""

from __future__ import annotations

import pytest

from hudi_ops.format.meta_client import MetaClient
from hudi_ops.job_specs import CleanSpec, CompactSpec, IngestSpec
from hudi_ops.sources.hudi_table import FULL_SCAN_FALLBACK, TRANSFORMER_SQL
from hudi_ops.spark.__main__ import main
from tests.integration.test_spark_jobs import NoSpark
from tests.tables import COLUMNS, Model, job_result, read_hudi_rs, read_spark, trips

pytestmark = pytest.mark.spark
#: the upstream keeps its change data (Hudi's CDC), which the derived table's ingest reads
CDC = {"hoodie.table.cdc.enabled": "true"}


class Tables:
    def __init__(self, tmp_path, spark, capsys, upstream_type="MERGE_ON_READ"):
        self.spark, self.capsys, self.upstream_type = spark, capsys, upstream_type
        self.upstream, self.derived = tmp_path / "upstream", tmp_path / "derived"
        self.model = Model()

    def write_upstream(self, rows, op="UPSERT", **conf):
        frame = self.spark.createDataFrame(rows, "trip_id string, dt string, ts long, fare double")
        options = {"hoodie.table.name": "upstream", "hoodie.datasource.write.recordkey.field": "trip_id",
                   "hoodie.datasource.write.partitionpath.field": "dt",
                   "hoodie.datasource.write.precombine.field": "ts",
                   "hoodie.datasource.write.table.type": self.upstream_type, "hoodie.datasource.write.operation": op,
                   "hoodie.compact.inline": "false", **CDC, **conf}
        frame.write.format("hudi").options(**options).mode("append").save(str(self.upstream))
        if op == "DELETE":
            for r in rows:
                self.model.rows.pop(r["trip_id"], None)
        else:
            self.model.upsert(rows)

    def ingest(self, run, spark=None, **conf) -> tuple[int, dict]:
        argv = IngestSpec(base_path=str(self.derived), table_name="derived", table_type="COPY_ON_WRITE",
                          record_key_field="trip_id", partition_path_field="dt", ordering_field="ts",
                          source_kind="hudi", source_path=str(self.upstream), run_id=run, hoodie_conf=conf).to_argv()
        code = main(argv, spark=spark or self.spark)
        return code, job_result(self.capsys.readouterr().out)

    def read(self, columns=COLUMNS):
        rows = read_hudi_rs(self.derived, columns)
        assert rows == read_spark(self.spark, self.derived, columns), "hudi-rs and Spark's Hudi reader disagree"
        return rows


@pytest.fixture
def tables(tmp_path, spark, capsys):
    return Tables(tmp_path, spark, capsys)


def test_a_derived_table_follows_its_upstreams_upserts_and_deletes_and_idles_on_services(tables, spark):
    tables.write_upstream(trips("2026-11-20", range(6), ts=1))
    code, result = tables.ingest("run-1")
    assert code == 0 and result["outcome"] == "committed" and result["inserts"] == 6, result
    assert tables.read() == tables.model.expected()

    tables.write_upstream(trips("2026-11-20", range(2), ts=2, fare=99.0) + trips("2026-11-21", range(3), ts=2))
    tables.write_upstream([r for r in trips("2026-11-20", range(4, 6), ts=1)], op="DELETE")
    code, result = tables.ingest("run-2")
    assert code == 0 and result["deletes"] == 2 and result["inserts"] == 3 and result["updates"] == 2, result
    assert tables.read() == tables.model.expected()

    # the upstream's compaction changes no row: no work, no Spark
    assert main(CompactSpec(base_path=str(tables.upstream), mode="scheduleAndExecute",
                            hoodie_conf={"hoodie.compact.inline.max.delta.commits": "1"}).to_argv(), spark=spark) == 0
    tables.capsys.readouterr()
    code, result = tables.ingest("run-3", spark=NoSpark())
    assert code == 0 and result["instant"] is None and "0 new commit(s)" in result["reason"], result["message"]
    code, again = tables.ingest("run-2", spark=NoSpark())  # a retry of the run that committed
    assert again["outcome"] == "already committed", again


def test_a_transform_shapes_the_changes_and_keeps_the_delete_marker(tables):
    tables.write_upstream(trips("2026-11-20", range(4), ts=1))
    query = "SELECT trip_id, dt, ts, fare * 2 AS fare, _hoodie_is_deleted FROM <SRC> WHERE fare > 11"
    code, result = tables.ingest("run-1", **{TRANSFORMER_SQL: query})
    assert code == 0, result
    assert tables.read() == sorted((r["trip_id"], r["dt"], r["ts"], r["fare"] * 2)
                                   for r in tables.model.rows.values() if r["fare"] > 11)


def test_an_upstream_cleaned_past_the_checkpoint_fails_naming_both_instants(tmp_path, spark, capsys):
    tables = Tables(tmp_path, spark, capsys, "COPY_ON_WRITE")  # each upsert a new file version to clean
    tables.write_upstream(trips("2026-11-20", range(3), ts=1))
    assert tables.ingest("run-1")[0] == 0
    checkpoint = tables.ingest("idle", spark=NoSpark())[1]["checkpoint"]
    for n in range(4):  # the derived table lags while the upstream's cleaner keeps one commit
        tables.write_upstream(trips("2026-11-20", range(3), ts=2 + n, fare=20.0 + n))
    assert main(CleanSpec(base_path=str(tables.upstream),
                          hoodie_conf={"hoodie.cleaner.commits.retained": "1"}).to_argv(), spark=spark) == 0
    tables.capsys.readouterr()
    clean = next(i for i in MetaClient.open(tables.upstream).timeline().completed if i.action == "clean")
    before = tables.read()
    code, result = tables.ingest("run-2", spark=NoSpark())
    assert code == 2 and result["error"] == "InvalidInputError", result
    assert checkpoint in result["message"] and clean.requested_time in result["message"], result
    assert FULL_SCAN_FALLBACK in result["message"] and tables.read() == before

    code, result = tables.ingest("run-2", **{FULL_SCAN_FALLBACK: "true"})
    assert code == 0 and result["warnings"], result
    assert tables.read() == tables.model.expected()
