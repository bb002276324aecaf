"""Keys held more than once: `hudi-ops check duplicates` (hudi-rs) finds them on a table Hudi's `insert` wrote
them into, as a plain model of the rows written says, and the `dedupe` job (run in the shared session)
leaves each key once per partition (under a global index: once in the table) with its latest version, as hudi-rs
and Spark's Hudi reader both read."""

from __future__ import annotations

import json
from collections import Counter, defaultdict

from hudi_ops.cli import main as cli
from hudi_ops.errors import EXIT_BAD_INPUT, EXIT_DUPLICATES
from hudi_ops.format.meta_client import MetaClient
from hudi_ops.job_specs import DedupeSpec
from tests.integration.lock_options import occ_options
from tests.integration.test_spark_jobs import DAY1, DAY2, run_captured
from tests.tables import COLUMNS, job_result, read_hudi_rs, read_spark, tree, trips

GLOBAL = ["--hoodie-conf", "hoodie.index.type=GLOBAL_SIMPLE"]
# Hudi's insert keeps what its input holds: a key the table has already, or twice in one batch, is written again
INSERT = {"hoodie.table.name": "trips", "hoodie.datasource.write.recordkey.field": "trip_id",
          "hoodie.datasource.write.partitionpath.field": "dt", "hoodie.datasource.write.precombine.field": "ts",
          "hoodie.datasource.write.operation": "insert"}
BATCHES = [
    trips(DAY1, range(4), ts=1) + trips(DAY2, range(2), ts=1),
    [*trips(DAY1, range(2), ts=2, fare=50.0),  # two keys again, newer
     *trips(DAY1, [2], ts=0, fare=60.0),  # one again, older: the first version stays the latest
     {**trips(DAY1, [3], ts=1)[0], "dt": DAY2},  # a key of DAY1 in DAY2 too
     *trips(DAY1, [1], ts=3, fare=70.0)],  # one a third time, in the same batch, newer still
    trips(DAY1, [0], ts=2, fare=80.0),  # a tie on ts: the latest commit wins
]


def written_with_duplicates(spark, path, batches=BATCHES):
    """A trips table of `batches`, each written with Hudi's insert; the rows written, each with its batch."""
    for batch in batches:
        spark.createDataFrame(batch, "trip_id string, dt string, ts long, fare double").write.format("hudi") \
            .options(**INSERT).mode("append").save(str(path))
    return [(n, row) for n, batch in enumerate(batches) for row in batch]


def latest_versions(written, global_index=False):
    """The model of a repaired table: per key and partition (under a global index, per key), the greatest ts, then
    the latest batch (within a batch the repair may keep either of two rows equal on ts, and the model has none
    such); and the versions the repair removes."""
    latest = {}
    for n, row in written:
        place = row["trip_id"] if global_index else (row["trip_id"], row["dt"])
        if place not in latest or (row["ts"], n) >= (latest[place][1]["ts"], latest[place][0]):
            latest[place] = (n, row)
    kept = {id(row): row for _, row in latest.values()}
    return (sorted(tuple(row[c] for c in COLUMNS) for row in kept.values()),
            [row for _, row in written if id(row) not in kept])


def check(capsys, path, *flags):
    code = cli(["check", "duplicates", str(path), "--json", *flags])
    return code, json.loads(capsys.readouterr().out)


def test_check_duplicates_finds_the_keys_written_twice_within_and_across_partitions(spark, tmp_path, capsys):
    table = tmp_path / "trips"
    written = written_with_duplicates(spark, table)
    held = Counter((row["trip_id"], row["dt"]) for _, row in written)
    partitions = defaultdict(dict)
    for (key, dt), n in held.items():
        partitions[key][dt] = n

    code, found = check(capsys, table)
    assert code == EXIT_DUPLICATES and found["found"] and not found["global_index"], found
    assert found["records"] == len(written)
    assert {(d["key"], d["partition"]): d["records"] for d in found["within_partitions"]} == \
        {place: n for place, n in held.items() if n > 1}
    assert {k["key"]: k["partitions"] for k in found["across_partitions"]} == \
        {key: held for key, held in partitions.items() if len(held) > 1}
    for d in found["within_partitions"]:  # the files named hold the key's partition's records
        assert d["files"] and all((table / d["partition"] / f).is_file() for f in d["files"]), d

    assert cli(["check", "duplicates", str(table)]) == EXIT_DUPLICATES
    text = capsys.readouterr().out
    assert "3 key(s) held more than once within a partition" in text and "dedupe" in text, text
    assert "1 key(s) in more than one partition" in text and "unless the index is global" in text, text


def test_dedupe_keeps_each_keys_latest_version_and_the_check_then_passes(spark, tmp_path, capsys, zookeeper):
    table = tmp_path / "trips"
    written = written_with_duplicates(spark, table)
    options = occ_options(zookeeper.url)  # under the table's lock, as every writer of a locked table
    before = tree(table)

    code, out = run_captured(DedupeSpec(base_path=str(table), dry_run=True, hoodie_conf=options).to_argv(), spark)
    planned = job_result(out)
    assert code == 0 and planned["outcome"] == "planned" and planned["instant"] is None, planned
    assert planned["details"] == {"removed": {DAY1: 5}, "keys": {DAY1: 3}}, planned
    assert tree(table) == before

    code, out = run_captured(DedupeSpec(base_path=str(table), hoodie_conf=options).to_argv(), spark)
    repaired = job_result(out)
    assert code == 0 and repaired["outcome"] == "completed", repaired
    assert repaired["details"] == planned["details"] and repaired["rows"] == 4, repaired
    done = MetaClient.open(table).timeline().completed_instant(repaired["instant"])
    assert done.action == "replacecommit"
    expected, _ = latest_versions(written)
    assert read_hudi_rs(table) == read_spark(spark, table) == expected

    code, after = check(capsys, table)
    assert code == 0 and after["within_partitions"] == [], after
    # a key in two partitions is two records under Hudi's default index, one duplicated under a global index
    assert [k["key"] for k in after["across_partitions"]] == [f"{DAY1}-0003"]
    assert check(capsys, table, *GLOBAL)[0] == EXIT_DUPLICATES

    code, out = run_captured(DedupeSpec(base_path=str(table), partitions=DAY1, hoodie_conf=options).to_argv(),
                             spark)
    idle = job_result(out)
    assert code == 0 and idle["instant"] is None and "no key is held more than once" in idle["reason"], idle


def test_under_a_global_index_dedupe_keeps_each_keys_latest_version_wherever_it_is(spark, tmp_path, capsys,
                                                                                    zookeeper):
    table, day3 = tmp_path / "trips", "2026-11-22"
    # an older version of a DAY2 key, alone in a partition of its own: the repair leaves that partition empty
    written = written_with_duplicates(spark, table, [*BATCHES, [{**trips(DAY2, [0], ts=0)[0], "dt": day3}]])
    options = {**occ_options(zookeeper.url), "hoodie.index.type": "GLOBAL_SIMPLE"}
    expected, removed = latest_versions(written, global_index=True)
    code, found = check(capsys, table, *GLOBAL)
    assert code == EXIT_DUPLICATES and found["global_index"], found
    assert sorted(k["key"] for k in found["across_partitions"]) == [f"{DAY1}-0003", f"{DAY2}-0000"], found
    assert cli(["check", "duplicates", str(table), *GLOBAL]) == EXIT_DUPLICATES
    assert "keeps each key's latest version across partitions (give it --hoodie-conf hoodie.index.type=GLOBAL_SIMPLE)" \
        in capsys.readouterr().out

    by_partition = defaultdict(list)
    for row in removed:
        by_partition[row["dt"]].append(row["trip_id"])
    assert set(by_partition) == {DAY1, day3}  # the model's: DAY1's version of its key 3 is older than DAY2's

    def details(*days):
        return {"removed": {dt: len(by_partition[dt]) for dt in days},
                "keys": {dt: len(set(by_partition[dt])) for dt in days}}

    # --partitions limits what is rewritten, not what is compared: key 3's latest is outside DAY1
    code, out = run_captured(DedupeSpec(base_path=str(table), partitions=DAY1, dry_run=True,
                                        hoodie_conf=options).to_argv(), spark)
    planned = job_result(out)
    assert code == 0 and planned["outcome"] == "planned" and planned["details"] == details(DAY1), planned

    code, out = run_captured(DedupeSpec(base_path=str(table), hoodie_conf=options).to_argv(), spark)
    repaired = job_result(out)
    assert code == 0 and repaired["outcome"] == "completed", repaired
    assert repaired["details"] == details(DAY1, day3), repaired
    assert read_hudi_rs(table) == read_spark(spark, table) == expected
    assert day3 not in {row[COLUMNS.index("dt")] for row in expected}

    code, after = check(capsys, table, *GLOBAL)
    assert code == 0 and after["within_partitions"] == after["across_partitions"] == [], after


def test_a_global_repair_that_would_empty_a_partition_refuses_partition_paths_with_a_comma(spark, tmp_path,
                                                                                          zookeeper):
    """Hudi takes the partitions an overwrite empties in a comma-separated list: a path with a comma cannot be in
    it, and the repair says so before it writes."""
    table = tmp_path / "trips"
    written_with_duplicates(spark, table, [[
        {**trips(DAY1, [1], ts=2)[0], "dt": "c"}, {**trips(DAY1, [1], ts=1)[0], "dt": "a,b"},  # a,b rewritten
        {**trips(DAY1, [2], ts=1)[0], "dt": "a,b"}, {**trips(DAY1, [2], ts=0)[0], "dt": "d"}]])  # d left empty
    before = tree(table)
    options = {**occ_options(zookeeper.url), "hoodie.index.type": "GLOBAL_SIMPLE"}
    code, out = run_captured(DedupeSpec(base_path=str(table), hoodie_conf=options).to_argv(), spark)
    refused = job_result(out)
    assert code == EXIT_BAD_INPUT, refused
    assert "partition(s) d empty" in refused["message"] and "a,b hold a comma" in refused["message"]
    assert tree(table) == before
