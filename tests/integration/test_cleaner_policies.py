"""Hudi's cleaner policies, as the cleaner guide (../shared/seeds, "Employing correct configurations
for Hudi's cleaner table service") explains them, on a COPY_ON_WRITE table written by the jobs.

The guide's figure 1 has five commits and four file groups in a partition. Hudi gives no control over
which file group of a partition an update lands in, so here each file group has a partition of its
own (`fg1`..`fg4`) and each commit updates the groups the figure's colours say:

    commit  c1  c2  c3  c4  c5
    fg1     x   x   x
    fg2     x   x   x   x   x      (written by all five commits, as in the guide)
    fg3     x       x       x
    fg4                 x   x      (the latest two commits only, as in the guide)

The expected slices come from the guide's rules, written down here as a plain model: KEEP_LATEST_COMMITS
with N retained keeps what a query that started after the (N+1)th latest commit can still read (every
slice newer than that commit, and the latest slice at it); KEEP_LATEST_FILE_VERSIONS with N keeps the
latest N slices of each group; a savepointed slice is never removed.
"""

from __future__ import annotations

import pytest

from hudi_ops.cli import main as cli_main
from hudi_ops.format.meta_client import MetaClient
from tests.integration.test_spark_jobs import run
from tests.tables import Model, read_hudi_rs, read_spark, write_source

GROUPS_OF_COMMIT = [("fg1", "fg2", "fg3"), ("fg1", "fg2"), ("fg1", "fg2", "fg3"), ("fg2", "fg4"), ("fg2", "fg3", "fg4")]


def rows_of(commit: int, group: str) -> list[dict]:
    return [{"trip_id": f"{group}-{i}", "dt": group, "ts": commit, "fare": float(commit)} for i in range(4)]


@pytest.fixture
def figure_1(spark, tmp_path, capsys):
    """The table after the five commits: (path, [commit instants], model of the rows after each commit)."""
    table, source = tmp_path / "trips", tmp_path / "landing"
    models, model, commits = [], Model(), []
    for n, groups in enumerate(GROUPS_OF_COMMIT, start=1):
        rows = [r for g in groups for r in rows_of(n, g)]
        write_source(source / f"c{n}.parquet", rows)
        code, result = run(capsys, ["ingest", "--target-base-path", str(table), "--target-table", "trips",
                                    "--source-path", str(source), "--record-key-field", "trip_id",
                                    "--partition-path-field", "dt", "--source-ordering-field", "ts",
                                    "--hoodie-conf", "hoodie.clean.automatic=false"], spark)
        assert code == 0
        commits.append(result["instant"])
        models.append(model.upsert(rows).expected())
    return table, commits, models


def slices(table) -> dict[str, set[str]]:
    """Per file group (partition), the commits of its base files on disk."""
    meta = MetaClient.open(table)
    return {g.id.partition_path: {s.base_instant for s in g.slices} for g in meta.fs_view().file_groups()}


def written(commits: list[str]) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for instant, groups in zip(commits, GROUPS_OF_COMMIT[:len(commits)], strict=True):
        for g in groups:
            out.setdefault(g, set()).add(instant)
    return out


def keep_latest_commits(commits: list[str], retained: int, savepointed: set[str] = frozenset()) -> dict[str, set[str]]:
    """The guide: the last `retained` commits + 1 stay readable."""
    oldest_readable = commits[-(retained + 1)]
    out = {}
    for group, times in written(commits).items():
        at_oldest = max((t for t in times if t <= oldest_readable), default=None)
        out[group] = {t for t in times if t > oldest_readable or t == at_oldest or t in savepointed}
    return out


def keep_latest_versions(commits: list[str], versions: int) -> dict[str, set[str]]:
    return {group: set(sorted(times)[-versions:]) for group, times in written(commits).items()}


def clean(capsys, spark, table, policy, **keys):
    flags = ["--hoodie-conf", f"hoodie.cleaner.policy={policy}"]
    for key, value in keys.items():
        flags += ["--hoodie-conf", f"hoodie.cleaner.{key.replace('_', '.')}={value}"]
    code, result = run(capsys, ["clean", "--base-path", str(table), *flags], spark)
    assert code == 0, result.get("message")
    return result


def test_keep_latest_commits_with_2_retained_keeps_the_last_2_commits_plus_1(figure_1, spark, capsys):
    table, commits, models = figure_1
    assert slices(table) == written(commits)
    result = clean(capsys, spark, table, "KEEP_LATEST_COMMITS", commits_retained=2)
    assert slices(table) == keep_latest_commits(commits, 2)
    assert result["files"] == sum(map(len, written(commits).values())) - sum(map(len, slices(table).values()))
    # the files a query as of the guide's "+1" commit reads are all there (hudi-rs reads it; Spark's Hudi
    # reader accepts times from the earliest retained commit on, one later)
    assert read_hudi_rs_as_of(table, commits[2]) == models[2]
    assert read_hudi_rs_as_of(table, commits[3]) == read_spark_as_of(spark, table, commits[3]) == models[3]
    # an older query's files are gone: Spark's Hudi reader refuses the time; hudi-rs would silently
    # return what is left, so `hudi-ops read` refuses it, naming the time that is safe
    assert read_hudi_rs_as_of(table, commits[0]) != models[0]
    with pytest.raises(Exception, match="Cleaner cleaned up the timestamp of interest"):
        read_spark_as_of(spark, table, commits[0])
    assert cli_main(["read", str(table), "--as-of", commits[0]]) == 2
    assert f"the earliest commit the last clean ({result['instant']}) kept readable" in capsys.readouterr().err
    assert read_hudi_rs(table) == read_spark(spark, table) == models[-1]


def test_keep_latest_file_versions_with_1_keeps_one_slice_per_file_group(figure_1, spark, capsys):
    table, commits, models = figure_1
    clean(capsys, spark, table, "KEEP_LATEST_FILE_VERSIONS", fileversions_retained=1)
    assert slices(table) == keep_latest_versions(commits, 1)
    assert all(len(times) == 1 for times in slices(table).values())
    assert read_hudi_rs(table) == read_spark(spark, table) == models[-1]


def test_a_savepointed_slice_is_never_cleaned(figure_1, spark, capsys):
    table, commits, models = figure_1
    code, saved = run(capsys, ["savepoint", "--base-path", str(table), "--instant-time", commits[1]], spark)
    assert code == 0 and saved["outcome"] == "created"
    clean(capsys, spark, table, "KEEP_LATEST_COMMITS", commits_retained=1)
    kept = slices(table)
    at_savepoint = {g: max(t for t in times if t <= commits[1]) for g, times in written(commits[:2]).items()}
    assert all(at_savepoint[g] in kept[g] for g in at_savepoint)  # the savepoint's slices survive
    assert read_hudi_rs_as_of(table, commits[1]) == models[1]  # and the table reads as at the savepoint
    assert read_hudi_rs(table) == models[-1]


def read_hudi_rs_as_of(table, instant):
    import hudi
    import pyarrow as pa

    options = hudi.HudiReadOptions().with_as_of_timestamp(instant)
    batches = hudi.HudiTable(str(table)).read(options)
    if not batches:
        return []
    data = pa.Table.from_batches(batches)
    return sorted(tuple(r[c] for c in ("trip_id", "dt", "ts", "fare")) for r in data.to_pylist())


def read_spark_as_of(spark, table, instant):
    frame = spark.read.format("hudi").option("as.of.instant", instant).load(str(table))
    return sorted(tuple(r) for r in frame.select("trip_id", "dt", "ts", "fare").collect())


