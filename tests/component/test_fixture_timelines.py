"""The timeline and file-system view of the real Spark-written fixture tables (hudi-rs test data).

What the control plane reads without a JVM (`MetaClient.open(path)`: properties, `.timeline()`, `.fs_view()`,
the table schema), checked two ways:

1. Against hudi-rs 0.5.0 (the `hudi` package), an independent reader, on the same unpacked copy: its completed
   instants, its latest file slices, the base files its read-optimized reads take rows from, its schema.
2. Against the fixture catalogue (shared/reference/hudi-rs-oracle.md §4): which commits each story made, where
   logs sit, what an insert overwrite replaced.

Covered: table versions 6, 8 and 9, COW and MOR, timeline layouts 1 and 2, completion-time slicing of logs,
replaced file groups, and listing files instead of the metadata table.
Each fixture is unpacked once per module; tests that damage a table use their own copy.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import hudi
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from hudi_ops.format.file_group import BaseFile, FileGroupId, FileSlice
from hudi_ops.format.fs_view import FileSystemView
from hudi_ops.format.instant import Action, Instant, State
from hudi_ops.format.meta_client import MetaClient
from hudi_ops.format.timeline import Timeline
from tests.shared_data import FIXTURES, unzip_fixture

COW = "sample_table/cow"
MOR_PARQUET = "sample_table/mor/parquet"
MOR_AVRO = "sample_table/mor/avro"
TRIPS_MOR = "quickstart_trips_table/mor/avro"
V8_TRIPS = f"{TRIPS_MOR}/v8_trips_8i3u1d"

# -- the catalogue (§4) ----------------------------------------------------------------------------

TXNS = ["v9_txns_simple_meta", "v9_txns_simple_nometa", "v9_txns_complex_meta", "v9_txns_complex_nometa",
        "v9_txns_nonpart_meta", "v9_txns_nonpart_nometa", "v9_txns_simple_overwrite"]
ALL_COW = [
    *(f"{COW}/{name}" for name in (
        "v6_nonpartitioned", "v6_complexkeygen_hivestyle", "v6_simplekeygen_nonhivestyle",
        "v6_simplekeygen_hivestyle_no_metafields", "v6_simplekeygen_nonhivestyle_overwritetable",
        "v6_timebasedkeygen_nonhivestyle", "v6_empty", "v8_nonpartitioned", "v8_complexkeygen_hivestyle",
        "v8_simplekeygen_nonhivestyle", "v8_simplekeygen_hivestyle_no_metafields", "v8_empty",
        "v9_timebasedkeygen_epochmillis", "v9_timebasedkeygen_unixtimestamp", "v9_timebasedkeygen_nonhivestyle",
        *TXNS,
    )),
]
LANCE = [
    "quickstart_trips_table/cow/v9_trips_lance",
    f"{COW}/v9_lance_nonpartitioned",
    f"{COW}/v9_lance_txns_nonpart",
    f"{COW}/v9_lance_txns_simple",
]
LANCE_MOR = [f"{TRIPS_MOR}/v9_trips_lance", f"{MOR_AVRO}/v9_lance_nonhivestyle"]

#: MOR tables whose latest file slices carry log files (a snapshot merges them)
MOR_WITH_LOGS = [
    f"{TRIPS_MOR}/v6_trips_8i1u",
    f"{TRIPS_MOR}/v6_trips_8i3d",
    V8_TRIPS,
    f"{MOR_AVRO}/v9_timebasedkeygen_nonhivestyle",
    f"{MOR_PARQUET}/v6_nonpartitioned",
    f"{MOR_PARQUET}/v6_complexkeygen_hivestyle",
    f"{MOR_PARQUET}/v6_simplekeygen_nonhivestyle",
    f"{MOR_PARQUET}/v6_nonpartitioned_rollback",
    *LANCE_MOR,
]
#: MOR tables whose latest slices are base files only (compacted, clustered, overwritten or never updated)
MOR_WITHOUT_LOGS = [
    *(f"{MOR_AVRO}/{name}" for name in TXNS),
    f"{MOR_AVRO}/v9_nonpartitioned_rollback",
    f"{MOR_PARQUET}/v6_simplekeygen_nonhivestyle_overwritetable",
    f"{MOR_PARQUET}/v6_simplekeygen_hivestyle_no_metafields",
    f"{MOR_PARQUET}/v6_empty",
]
ALL_TABLES = [*ALL_COW, *LANCE, *MOR_WITH_LOGS, *MOR_WITHOUT_LOGS]


# -- fixtures and helpers --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def open_table(fixture_table) -> Callable[[str], MetaClient]:
    return lambda relative: MetaClient.open(fixture_table(relative))


@pytest.fixture
def private_copy(tmp_path) -> Callable[[str], Path]:
    """A fresh copy of a fixture for tests that damage it."""
    return lambda relative: unzip_fixture(f"{relative}.zip", tmp_path)


LISTING = {"hoodie.metadata.enable": "false"}  # hudi-rs lists files too, rather than trusting the MDT


def rs_file_slices(path: Path) -> list[tuple[str, str, str | None, tuple[str, ...]]]:
    slices = hudi.HudiTable(str(path)).get_file_slices(hudi.HudiReadOptions(hudi_options=LISTING))
    return sorted((s.partition_path, s.file_id, s.base_file_name or None, tuple(s.log_file_names)) for s in slices)


def latest_slices(view: FileSystemView) -> list[FileSlice]:
    """The newest slice of every live file group (a live group has at least one)."""
    return [g.slices[0] for g in view.file_groups()]


def latest_base_files(view: FileSystemView) -> list[BaseFile]:
    """The newest base file of every live file group (what a read-optimized read takes rows from)."""
    return [b for g in view.file_groups() if (b := next((s.base_file for s in g.slices if s.base_file), None))]


def our_file_slices(meta: MetaClient) -> list[tuple[str, str, str | None, tuple[str, ...]]]:
    return sorted(
        (s.partition_path, s.file_id, s.base_file.name.file_name if s.base_file else None,
         tuple(lf.name.file_name for lf in s.log_files))
        for s in latest_slices(meta.fs_view())
    )


def rs_read_optimized_files(path: Path) -> set[str]:
    """The base files hudi-rs' read-optimized read takes its rows from (`_hoodie_file_name` of every row)."""
    options = hudi.HudiReadOptions(hudi_options={**LISTING, "hoodie.read.use.read_optimized.mode": "true"})
    batches = hudi.HudiTable(str(path)).read(options)
    return set(pa.Table.from_batches(batches).column("_hoodie_file_name").to_pylist()) if batches else set()


# -- the whole catalogue ---------------------------------------------------------------------------


def test_the_lists_above_cover_every_fixture_table():
    zips = sorted(str(p.relative_to(FIXTURES).with_suffix("")) for p in FIXTURES.glob("*_table/**/*.zip"))
    assert len(zips) == 47
    assert sorted(ALL_TABLES) == zips


@pytest.mark.parametrize("relative", ALL_TABLES)
def test_properties_and_completed_instants_match_hudi_rs(open_table, fixture_table, relative):
    meta = open_table(relative)
    rs = hudi.HudiTable(str(fixture_table(relative)))
    assert (meta.properties.table_name, meta.properties.table_type, meta.is_mor) == (
        rs.table_name, rs.table_type, rs.is_mor)
    assert meta.is_mor == (relative in MOR_WITH_LOGS or relative in MOR_WITHOUT_LOGS)
    tl = meta.timeline()
    rs_tl = rs.get_timeline()
    theirs = {
        Action.COMMIT: rs_tl.get_completed_commits(),
        Action.DELTA_COMMIT: rs_tl.get_completed_deltacommits(),
        Action.REPLACE_COMMIT: rs_tl.get_completed_replacecommits(),
    }
    for action, instants in theirs.items():
        ours = [i.requested_time for i in tl.completed if i.action == action]
        assert ours == sorted(i.timestamp for i in instants), action
    if "empty" not in relative:
        assert tl.completed_writes()


@pytest.mark.parametrize("relative", ALL_TABLES)
def test_latest_file_slices_match_hudi_rs(open_table, fixture_table, relative):
    assert our_file_slices(open_table(relative)) == rs_file_slices(fixture_table(relative))


@pytest.mark.parametrize("relative", [r for r in ALL_TABLES if "no_metafields" not in r])
def test_read_optimized_base_files_match_hudi_rs(open_table, fixture_table, relative):
    """The newest base file of each live file group is what hudi-rs' read-optimized read takes its rows from
    (files a delete emptied add no rows)."""
    ours = {b.path: b.name.file_name for b in latest_base_files(open_table(relative).fs_view())}
    theirs = rs_read_optimized_files(fixture_table(relative))
    assert theirs <= set(ours.values())
    for path, name in ours.items():
        if name not in theirs:
            assert pq.ParquetFile(fixture_table(relative) / path).metadata.num_rows == 0, path


@pytest.mark.parametrize("relative", ALL_TABLES)
def test_table_schema_matches_hudi_rs(open_table, fixture_table, relative):
    ours = open_table(relative).table_schema()
    theirs = hudi.HudiTable(str(fixture_table(relative))).get_schema()
    assert ours is not None
    assert ours.names == theirs.names
    assert [f.type for f in ours] == [f.type for f in theirs]


@pytest.mark.parametrize("relative", MOR_WITH_LOGS)
def test_mor_tables_with_logs_in_their_latest_slices(open_table, relative):
    view = open_table(relative).fs_view()
    assert any(s.log_files for s in latest_slices(view))
    # every log sits on top of a base file: these tables have no log-only file groups
    assert all(s.base_file is not None for s in latest_slices(view))


@pytest.mark.parametrize("relative", MOR_WITHOUT_LOGS)
def test_mor_tables_without_logs_in_their_latest_slices(open_table, relative):
    view = open_table(relative).fs_view()
    assert all(not s.log_files for s in latest_slices(view))
    assert (latest_slices(view) == []) == ("empty" in relative)


# -- replaced file groups --------------------------------------------------------------------------


def test_insert_overwrite_table_hides_the_replaced_file_groups(open_table, fixture_table):
    relative = f"{COW}/v6_simplekeygen_nonhivestyle_overwritetable"
    meta = open_table(relative)
    tl = meta.timeline()
    assert [i.action for i in tl.completed_writes()] == ["commit", "commit", "replacecommit"]
    view = meta.fs_view(tl)
    assert len(view.replaced) == 3
    live = {g.id for g in view.file_groups()}
    assert live and not live & set(view.replaced)
    # the catalogue: only (4, Diana) is left, in partition byteField=30, and hudi-rs reads it from our live group
    assert {g.id.partition_path for g in view.file_groups()} == {"30"}
    assert rs_read_optimized_files(fixture_table(relative)) == {b.name.file_name for b in latest_base_files(view)}
    # the overwrite replaced every file group the two commits before it had written
    overwrite = tl.completed_writes()[2].requested_time
    assert set(view.replaced) == {g.id for g in view.groups if g.slices[-1].base_instant < overwrite}


def replaced_by(tl: Timeline, instant: Instant) -> set[FileGroupId]:
    """The file groups a replacecommit names as replaced."""
    ids = tl.commit_metadata(instant).partition_to_replace_file_ids or {}
    return {FileGroupId(partition, fid) for partition, fids in ids.items() for fid in fids}


def test_v9_insert_overwrite_of_one_partition_then_clustering(open_table):
    meta = open_table(f"{COW}/v9_txns_simple_meta")
    tl = meta.timeline()
    overwrite, clustering = [i for i in tl.completed_writes() if i.action == Action.REPLACE_COMMIT]
    assert [tl.commit_metadata(i).operation_type for i in (overwrite, clustering)] == ["INSERT_OVERWRITE", "CLUSTER"]
    writes = [i.requested_time for i in tl.completed_writes()]
    view = meta.fs_view(tl)

    def written_before(instant: str) -> set[FileGroupId]:
        return {g.id for g in view.groups if g.slices[-1].base_instant < instant}

    # the catalogue: INSERT OVERWRITE of the eu partition replaces eu's file groups and nothing else
    eu_before = {g for g in written_before(overwrite.requested_time) if g.partition_path == "region=eu"}
    assert eu_before and replaced_by(tl, overwrite) == eu_before
    # ... and writes one new eu file group, eu's only one until later writes
    assert [g.slices[-1].base_instant for g in view.groups if g.id.partition_path == "region=eu"
            and g.id not in eu_before and g.slices[-1].base_instant <= overwrite.requested_time] == [
        overwrite.requested_time]
    # the clustering rewrote every file group live before it into new ones
    assert replaced_by(tl, clustering) == written_before(clustering.requested_time) - eu_before
    assert set(view.replaced) == replaced_by(tl, overwrite) | replaced_by(tl, clustering)
    assert {s.base_instant for s in latest_slices(view)} == {clustering.requested_time, writes[-1]}


# -- the metadata table is never used --------------------------------------------------------------


@pytest.mark.parametrize("relative", [V8_TRIPS, f"{COW}/v9_txns_simple_meta", f"{MOR_AVRO}/v9_txns_nonpart_meta",
                                      f"{COW}/v9_timebasedkeygen_epochmillis"])
def test_tables_with_a_metadata_table_are_viewed_by_listing(private_copy, fixture_table, relative):
    path = private_copy(relative)
    assert "hoodie.table.metadata.partitions=" in (path / ".hoodie" / "hoodie.properties").read_text()
    # hudi-rs agrees with itself whether it reads the MDT or lists files
    rs_table = hudi.HudiTable(str(fixture_table(relative)))
    with_mdt = sorted((s.partition_path, s.file_id, s.base_file_name) for s in rs_table.get_file_slices())
    assert with_mdt == [t[:3] for t in rs_file_slices(fixture_table(relative))]
    damaged = 0
    for root, _dirs, files in os.walk(path / ".hoodie" / "metadata"):
        for name in files:
            Path(root, name).write_bytes(b"")  # every MDT file (timeline, HFiles, logs) is now unreadable
            damaged += 1
    assert damaged > 10
    meta = MetaClient.open(path)
    assert our_file_slices(meta) == rs_file_slices(fixture_table(relative))
    assert not any(g.id.partition_path.startswith(".hoodie") for g in meta.fs_view().file_groups())


# -- timeline and file-system view -----------------------------------------------------------------


def test_v6_timeline_is_layout_1_without_completion_times(open_table):
    tl = open_table(f"{COW}/v6_nonpartitioned").timeline()
    assert tl.layout_version == 1
    writes = tl.completed_writes()
    assert [i.action for i in writes] == ["commit", "commit"]
    assert all(i.completion_time is None and tl.completion_time(i) == i.requested_time for i in writes)
    assert [i.state for i in tl if i.requested_time == writes[0].requested_time] == [
        State.REQUESTED, State.INFLIGHT, State.COMPLETED]
    assert tl.pending == ()


def test_v8_mor_timeline(open_table):
    tl = open_table(V8_TRIPS).timeline()
    assert tl.layout_version == 2
    assert [(i.action, i.requested_time, i.completion_time) for i in tl.completed_writes()] == [
        ("deltacommit", "20251220210108078", "20251220210109593"),
        ("deltacommit", "20251220210123755", "20251220210124336"),
        ("deltacommit", "20251220210125441", "20251220210126002"),
        ("deltacommit", "20251220210127080", "20251220210127601"),
        ("deltacommit", "20251220210128625", "20251220210129197"),
        ("commit", "20251220210129235", "20251220210129883"),  # the compaction
        ("deltacommit", "20251220210130911", "20251220210131755"),
    ]
    assert [i.action for i in tl if i.requested_time == "20251220210129235"] == ["compaction", "compaction", "commit"]
    assert [i.action for i in tl.completed if i.action not in Action.WRITE_ACTIONS] == ["indexing"]
    assert tl.pending == ()
    assert tl.completed_writes()[-1].requested_time == "20251220210130911"


def test_v8_mor_completion_time_slicing(open_table):
    """hudi-v8.md §3.2: a log joins the slice with the greatest base instant <= its deltacommit's completion."""
    view = open_table(V8_TRIPS).fs_view()
    groups = {g.id.partition_path: g for g in view.file_groups()}
    assert set(groups) == {"city=chennai", "city=san_francisco", "city=sao_paulo"}
    compaction = "20251220210129235"

    def slices(city):
        return [(s.base_instant, [lf.instant_time for lf in s.log_files]) for s in groups[city].slices]

    # sao_paulo: the log of 20251220210130911 (completed 20251220210131755 >= compaction) is in the new slice
    assert slices("city=sao_paulo") == [
        (compaction, ["20251220210130911"]),
        ("20251220210108078", ["20251220210125441"]),
    ]
    # chennai: the log of 20251220210128625 completed at 20251220210129197 < compaction -> old slice
    assert slices("city=chennai") == [
        (compaction, []),
        ("20251220210108078", ["20251220210127080", "20251220210128625"]),
    ]
    assert slices("city=san_francisco") == [(compaction, []), ("20251220210108078", ["20251220210123755"])]
    latest = {s.partition_path: s for s in latest_slices(view)}
    assert all(s.base_instant == compaction and s.base_file is not None for s in latest.values())
    assert [lf.name.file_name for lf in latest["city=sao_paulo"].log_files] == [
        ".8aa68f7e-afd6-4c94-b86c-8a886552e08d-0_20251220210130911.log.1_0-1139-3316"
    ]


def test_v8_mor_log_completing_after_the_compaction_request_joins_the_new_slice(private_copy):
    """The fixture's requested and completion order agree, so move one completion (hudi-v8.md §3.3): the chennai
    deltacommit 20251220210128625 now completes after the compaction was requested - its log, whose name is
    older than the compaction, must join the compaction's slice (else its changes would vanish from snapshots)."""
    path = private_copy(V8_TRIPS)
    timeline = path / ".hoodie" / "timeline"
    (timeline / "20251220210128625_20251220210129197.deltacommit").rename(
        timeline / "20251220210128625_20251220210129500.deltacommit"
    )
    meta = MetaClient.open(path)
    chennai = next(g for g in meta.fs_view().file_groups() if g.id.partition_path == "city=chennai")
    assert [(s.base_instant, [lf.instant_time for lf in s.log_files]) for s in chennai.slices] == [
        ("20251220210129235", ["20251220210128625"]),
        ("20251220210108078", ["20251220210127080"]),
    ]
    rs_slices = hudi.HudiTable(str(path)).get_file_slices(hudi.HudiReadOptions(hudi_options=LISTING))
    rs_chennai = next(s for s in rs_slices if s.partition_path == "city=chennai")
    assert list(rs_chennai.log_file_names) == [lf.name.file_name for lf in chennai.latest_slice.log_files]


def test_a_commit_archived_while_the_newest_writes_are_read_is_left_out(private_copy):
    """Hudi's archiver writes instants to the archived timeline, then deletes their files: a reader that
    listed the active timeline before goes on without the vanished ones instead of failing."""
    meta = MetaClient.open(private_copy(V8_TRIPS))
    timeline = meta.timeline()
    writes = sorted(timeline.completed_writes(), key=timeline.completion_time)
    oldest = writes[0]
    Path(meta.storage.full_path(timeline.path_of(oldest))).unlink()  # what the archiver does last
    read = [inst.requested_time for inst, _ in timeline.newest_writes()]
    assert read == [i.requested_time for i in reversed(writes[1:])]


def test_a_meta_client_is_one_look_at_the_table_and_reload_looks_again(private_copy):
    """One question, one listing: the timeline and the file-system view are loaded once per MetaClient
    (on S3 each listing is a paid LIST); a job that changed the table, or a poll, looks again."""
    path = private_copy("sample_table/cow/v9_txns_simple_nometa")
    meta = MetaClient.open(path)
    timeline, view = meta.timeline(), meta.fs_view()
    assert meta.timeline() is timeline and meta.fs_view() is view and meta.fs_view(timeline) is view
    newest = max(i.requested_time for i in timeline)
    later = str(int(newest) + 1)
    (path / timeline.folder / f"{later}.commit.requested").write_bytes(b"")  # a writer begins meanwhile
    assert later not in {i.requested_time for i in meta.timeline()}
    again = meta.reload()
    assert later in {i.requested_time for i in again.timeline().pending}
    assert again.properties == meta.properties and again.fs_view() is not view
