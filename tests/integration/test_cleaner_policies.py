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
latest N slices of each group; a savepointed slice is never removed. KEEP_LATEST_BY_HOURS with N hours
retains the commits of the last N hours by the clean's own clock, and, like KEEP_LATEST_COMMITS, the latest
slice of each group below them (`keep_latest_by_hours`).
"""

from __future__ import annotations

import glob
import itertools
import os
import re
import shutil
import time
from datetime import datetime, timedelta

import pytest
from py4j.protocol import Py4JJavaError

from hudi_ops.cli import main as cli_main
from hudi_ops.format.meta_client import MetaClient
from hudi_ops.job_specs import CleanSpec, SavepointSpec
from hudi_ops.read.clean_planner import next_clean
from hudi_ops.read.service_work import clean_work
from tests.integration.processes import run_job
from tests.integration.test_spark_jobs import ingest_args, run, run_captured
from tests.tables import Model, job_result, read_hudi_rs, read_spark, write_source

pytestmark = pytest.mark.spark  # spark-submit jobs of its own

#: the writers' inline clean off: the tests' cleans are the only ones
NO_INLINE_CLEAN = {"hoodie.clean.automatic": "false"}
GROUPS_OF_COMMIT = [("fg1", "fg2", "fg3"), ("fg1", "fg2"), ("fg1", "fg2", "fg3"), ("fg2", "fg4"), ("fg2", "fg3", "fg4")]


def rows_of(commit: int, group: str) -> list[dict]:
    return [{"trip_id": f"{group}-{i}", "dt": group, "ts": commit, "fare": float(commit)} for i in range(4)]


@pytest.fixture(scope="module")
def figure_1_built(spark, tmp_path_factory):
    """The guide's five commits, written once for the module's tests: (path, [commit instants], model of the
    rows after each commit)."""
    built = tmp_path_factory.mktemp("figure_1")
    table, source = built / "trips", built / "landing"
    models, model, commits = [], Model(), []
    for n, groups in enumerate(GROUPS_OF_COMMIT, start=1):
        rows = [r for g in groups for r in rows_of(n, g)]
        write_source(source / f"c{n}.parquet", rows)
        code, out = run_captured(ingest_args(table, source, hoodie_conf=NO_INLINE_CLEAN), spark)
        assert code == 0
        commits.append(job_result(out)["instant"])
        models.append(model.upsert(rows).expected())
    return table, commits, models


@pytest.fixture
def figure_1(figure_1_built, tmp_path):
    """A test's own copy of the table after the five commits (its paths are relative: a copy is the same table)."""
    built, commits, models = figure_1_built
    table = tmp_path / "trips"
    shutil.copytree(built, table)
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


def keep_latest_by_hours(commits: list[str], hours: int, now: datetime) -> dict[str, set[str]]:
    """Hudi's planner (CleanerUtils.getEarliestCommitToRetain, CleanPlanner): the earliest commit to retain is the
    first whose instant time is at or after the clean's clock minus `hours` (both local time); every slice from
    it on stays, and of the older ones each group keeps its latest, which a query started before it reads. With
    no commit in the window there is no commit to retain, and nothing is cleaned."""
    cut = instant_of(now - timedelta(hours=hours))
    retained = [t for t in commits if t >= cut]
    if not retained:
        return written(commits)
    earliest = retained[0]
    out = {}
    for group, times in written(commits).items():
        below = max((t for t in times if t < earliest), default=None)
        out[group] = {t for t in times if t >= earliest or t == below}
    return out


def instant_of(moment: datetime) -> str:
    return moment.strftime("%Y%m%d%H%M%S%f")[:17]  # Hudi's yyyyMMddHHmmssSSS


def time_of(instant: str) -> datetime:
    return datetime.strptime(instant, "%Y%m%d%H%M%S%f")


def keep_latest_versions(commits: list[str], versions: int) -> dict[str, set[str]]:
    return {group: set(sorted(times)[-versions:]) for group, times in written(commits).items()}


def clean(capsys, spark, table, policy, *, dry_run=False, **keys):
    options = {"hoodie.cleaner.policy": policy, **{f"hoodie.cleaner.{k.replace('_', '.')}": str(v)
                                                   for k, v in keys.items()}}
    expected = next_clean(MetaClient.open(table), options)  # the control plane's model of Hudi's planner
    code, result = run(capsys, CleanSpec(base_path=str(table), dry_run=dry_run, hoodie_conf=options).to_argv(), spark)
    assert code == 0, result.get("message")
    assert set(result["details"].get("files", ())) == set(expected.files)
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
    code, saved = run(capsys, SavepointSpec(base_path=str(table), instant_time=commits[1]).to_argv(), spark)
    assert code == 0 and saved["outcome"] == "created"
    clean(capsys, spark, table, "KEEP_LATEST_COMMITS", commits_retained=1)
    kept = slices(table)
    at_savepoint = {g: max(t for t in times if t <= commits[1]) for g, times in written(commits[:2]).items()}
    assert all(at_savepoint[g] in kept[g] for g in at_savepoint)  # the savepoint's slices survive
    assert read_hudi_rs_as_of(table, commits[1]) == models[1]  # and the table reads as at the savepoint
    assert read_hudi_rs(table) == models[-1]


#: Debian's libfaketime (package `faketime`): preloaded into a process, it shifts every clock the process reads
LIBFAKETIME = next(iter(sorted(glob.glob("/usr/lib/*/faketime/libfaketime.so.1"))), None)


def ingest_at(table, source, moment: datetime, log, monkeypatch):
    """`ingest` as a spark-submit whose clocks (its JVM's, so Hudi's instant times, and its Python driver's) read
    `moment` when it starts and run on from there. Hudi has no option for a datasource write's commit time.
    The monotonic clock is shifted too, libfaketime's default (its README asks FAKETIME_DONT_FAKE_MONOTONIC=1
    for Java, but with it Java 17's timed waits return at once, its threads spin and Spark's jobs crawl).
    File times are left alone (NO_FAKE_STAT): shifted, each job would see the source files' modification
    times, which order them for the ingest checkpoint, moved by its own offset, and take old files again."""
    if LIBFAKETIME is None:
        pytest.fail("needs libfaketime in /usr/lib/*/faketime: install Debian's faketime package")
    with monkeypatch.context() as m:  # run_job's process inherits this process's environment
        m.setenv("LD_PRELOAD", LIBFAKETIME)
        m.setenv("FAKETIME", f"{moment.timestamp() - time.time():+.0f}s")  # an offset from the real clock
        m.setenv("NO_FAKE_STAT", "1")
        return run_job(ingest_args(table, source, hoodie_conf=NO_INLINE_CLEAN), log)


def test_keep_latest_by_hours_keeps_what_the_hours_say(spark, tmp_path, capsys, monkeypatch):
    """The guide's first three commits, half an hour apart, the latest three quarters of an hour ago (so that
    a cut a whole number of hours back falls a quarter of an hour from any commit), then a clean now."""
    table, source = tmp_path / "trips", tmp_path / "landing"
    start, n = datetime.now(), 3
    planned = [start - timedelta(minutes=45 + 30 * (n - k)) for k in range(1, n + 1)]  # 1h45, 1h15, 45min ago
    model, commits = Model(), []
    for k, (moment, groups) in enumerate(zip(planned, GROUPS_OF_COMMIT[:n], strict=True), start=1):
        rows = [r for g in groups for r in rows_of(k, g)]
        write_source(source / f"c{k}.parquet", rows)
        code, result = ingest_at(table, source, moment, tmp_path / f"c{k}.log", monkeypatch)
        assert code == 0 and result["checkpoint"].endswith(f":c{k}.parquet") and result["rows"] == len(rows), result
        commits.append(result["instant"])
        model.upsert(rows)
    # the commit times are the ones the jobs were set to (plus their start-up), 30 minutes apart
    times = [time_of(c) for c in commits]
    assert all(moment <= t < moment + timedelta(minutes=3) for moment, t in zip(planned, times, strict=True)), commits
    assert all(abs(b - a - timedelta(minutes=30)) < timedelta(minutes=2) for a, b in itertools.pairwise(times)), commits
    assert slices(table) == written(commits)

    # two hours back reaches before the first commit: every commit is retained, nothing is due
    planned_clean = clean(capsys, spark, table, "KEEP_LATEST_BY_HOURS", hours_retained=2, dry_run=True)
    assert planned_clean["files"] == 0 and keep_latest_by_hours(commits, 2, datetime.now()) == written(commits)

    # one hour back falls between the second and third commits: the third is the earliest retained; below it each
    # group keeps its latest slice, however old: fg1 and fg2 keep the second commit's and lose the first's, while
    # fg3, which the second commit did not write, keeps the first's
    before = datetime.now()
    # the services' check, which cannot know the writers' zone, sees the work too
    by_hours = {"hoodie.cleaner.policy": "KEEP_LATEST_BY_HOURS", "hoodie.cleaner.hours.retained": "1"}
    assert clean_work(MetaClient.open(table), by_hours).due
    result = clean(capsys, spark, table, "KEEP_LATEST_BY_HOURS", hours_retained=1)
    expected = keep_latest_by_hours(commits, 1, before)
    assert keep_latest_by_hours(commits, 1, datetime.now()) == expected  # the cut moved past no commit meanwhile
    assert expected == {"fg1": {commits[1], commits[2]}, "fg2": {commits[1], commits[2]},
                        "fg3": {commits[0], commits[2]}}
    assert slices(table) == expected
    assert result["files"] == 2 and all(f"_{commits[0]}." in f for f in result["details"]["files"])
    assert read_hudi_rs(table) == read_spark(spark, table) == model.expected()


def test_a_reader_opened_before_the_clean_reads_on_if_retained_and_fails_naming_a_cleaned_file_if_not(
        figure_1, spark, capsys):
    table, commits, models = figure_1

    def reader(instant=None):
        frame = spark.read.format("hudi")
        return (frame.option("as.of.instant", instant) if instant else frame).load(str(table))

    def rows(frame):
        return sorted(tuple(r) for r in frame.select("trip_id", "dt", "ts", "fare").collect())

    # Hudi's relation lists its files lazily: a DataFrame made before the clean but first used after it reads
    # what the clean left, so as of a cleaned commit it silently returns too little (here nothing). Listing
    # its files (`inputFiles`) fixes them for the DataFrame's life: that is a reader opened before the clean.
    unopened = reader(commits[0])
    readers = {"latest": reader(), **{i: reader(commits[i]) for i in (0, 2, 3)}}
    opened = {key: {os.path.relpath(f.removeprefix("file:"), table) for f in frame.inputFiles()}
              for key, frame in readers.items()}

    result = clean(capsys, spark, table, "KEEP_LATEST_COMMITS", commits_retained=2)
    cleaned = set(result["details"]["files"])
    assert cleaned and result["files"] == len(cleaned)
    # retention (the last 2 commits + 1) covers the latest snapshot and snapshots as of commits[2] and [3]: none
    # of their files was removed, and they read exactly what the table held then
    assert all(opened[key].isdisjoint(cleaned) for key in ("latest", 2, 3))
    assert rows(readers["latest"]) == models[-1]
    assert rows(readers[2]) == models[2] and rows(readers[3]) == models[3]
    # it does not cover commits[0]: the clean removed every file that snapshot reads, and reading fails naming one
    assert opened[0] <= cleaned
    with pytest.raises(Py4JJavaError) as failure:
        rows(readers[0])
    missing = re.search(r"File (?:file:)?(\S+) does not exist", str(failure.value))
    assert missing, str(failure.value)[:2000]
    assert os.path.relpath(missing[1], table) in cleaned
    assert rows(unopened) == [] != models[0]


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


