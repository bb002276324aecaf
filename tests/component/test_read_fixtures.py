"""Reads of the real Spark-written fixture tables (hudi-rs test data), checked two ways.

1. Against the expected contents of the fixture catalogue (shared/reference/hudi-rs-oracle.md §4).
2. Against hudi-rs 0.5.0 (the `hudi` package), an independent reader, on the same unpacked copy.

Covered: COW snapshots of table versions 6, 8 and 9 (incl. insert overwrite = replacecommit), time travel,
incremental queries over completion times (v8+), projection and filters with partition pruning,
read-optimized reads of MERGE_ON_READ tables, the refusal of snapshot reads that would need log merging,
listing instead of the metadata table, and the timeline / file-system view behind all of it.
Each fixture is unpacked once per module.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path

import hudi
import pyarrow as pa
import pyarrow.compute as pc
import pytest

from hudi_ops import HudiTable
from hudi_ops.errors import HudiOpsError, InvalidInputError, InvalidTableError
from hudi_ops.format.instant import Action, State, parse_instant_time
from hudi_ops.format.meta_fields import META_FIELDS
from tests.shared_data import unzip_fixture

COW = "sample_table/cow"
MOR_PARQUET = "sample_table/mor/parquet"
MOR_AVRO = "sample_table/mor/avro"
TRIPS_MOR = "quickstart_trips_table/mor/avro"
V8_TRIPS = f"{TRIPS_MOR}/v8_trips_8i3u1d"
BEGINNING = "19700101000000000"

# -- expected contents (catalogue §4) --------------------------------------------------------------

STORY = [(1, "Alice", False), (2, "Bob", False), (3, "Carol", True), (4, "Diana", True)]
STORY_FIRST_COMMIT = [(1, "Alice", True), (2, "Bob", False), (3, "Carol", True)]
OVERWRITTEN = [(4, "Diana", False)]

SAMPLE_COW = {
    f"{COW}/v6_nonpartitioned": STORY,
    f"{COW}/v6_complexkeygen_hivestyle": STORY,
    f"{COW}/v6_simplekeygen_nonhivestyle": STORY,
    f"{COW}/v6_simplekeygen_hivestyle_no_metafields": STORY,
    f"{COW}/v6_simplekeygen_nonhivestyle_overwritetable": OVERWRITTEN,
    f"{COW}/v6_timebasedkeygen_nonhivestyle": STORY,
    f"{COW}/v6_empty": [],
    f"{COW}/v8_nonpartitioned": STORY,
    f"{COW}/v8_complexkeygen_hivestyle": STORY,
    f"{COW}/v8_simplekeygen_nonhivestyle": STORY,
    f"{COW}/v8_simplekeygen_hivestyle_no_metafields": STORY,
    f"{COW}/v8_empty": [],
}
#: tables whose story has an insert, then an upsert of Alice and an insert of Diana
STORY_TABLES = [t for t, rows in SAMPLE_COW.items() if rows == STORY and "no_metafields" not in t]

TXNS_PARTITIONED = sorted(f"TXN-{n:03d}" for n in (1, 3, 7, 8, *range(11, 19)))
TXNS_NONPART = sorted(f"TXN-{n:03d}" for n in (1, 3, 4, *range(6, 17)))
TXNS_OVERWRITE = ["TXN-101", "TXN-102", "TXN-103"]
TXNS = {
    "v9_txns_simple_meta": TXNS_PARTITIONED,
    "v9_txns_simple_nometa": TXNS_PARTITIONED,
    "v9_txns_complex_meta": TXNS_PARTITIONED,
    "v9_txns_complex_nometa": TXNS_PARTITIONED,
    "v9_txns_nonpart_meta": TXNS_NONPART,
    "v9_txns_nonpart_nometa": TXNS_NONPART,
    "v9_txns_simple_overwrite": TXNS_OVERWRITE,
}
TXNS_COW = {f"{COW}/{name}": ids for name, ids in TXNS.items()}
TXNS_MOR = {f"{MOR_AVRO}/{name}": ids for name, ids in TXNS.items()}
TIMEBASED_V9 = {  # 6 / 6 / 5 rows, each with two TXN-001 rows (1.x INSERT INTO is an insert)
    f"{COW}/v9_timebasedkeygen_epochmillis": ["TXN-001", "TXN-001", "TXN-002", "TXN-003", "TXN-005", "TXN-006"],
    f"{COW}/v9_timebasedkeygen_unixtimestamp": ["TXN-001", "TXN-001", "TXN-002", "TXN-003", "TXN-005", "TXN-006"],
    f"{COW}/v9_timebasedkeygen_nonhivestyle": ["TXN-001", "TXN-001", "TXN-003", "TXN-004", "TXN-005"],
}
ALL_COW = [*SAMPLE_COW, *TXNS_COW, *TIMEBASED_V9]
LANCE = [
    "quickstart_trips_table/cow/v9_trips_lance",
    f"{COW}/v9_lance_nonpartitioned",
    f"{COW}/v9_lance_txns_nonpart",
    f"{COW}/v9_lance_txns_simple",
]
LANCE_MOR = [f"{TRIPS_MOR}/v9_trips_lance", f"{MOR_AVRO}/v9_lance_nonhivestyle"]

#: MOR tables whose latest file slices carry log files: a snapshot would need log merging
MOR_WITH_LOGS = [
    f"{TRIPS_MOR}/v6_trips_8i1u",
    f"{TRIPS_MOR}/v6_trips_8i3d",
    V8_TRIPS,
    f"{MOR_AVRO}/v9_timebasedkeygen_nonhivestyle",
    f"{MOR_PARQUET}/v6_nonpartitioned",
    f"{MOR_PARQUET}/v6_complexkeygen_hivestyle",
    f"{MOR_PARQUET}/v6_simplekeygen_nonhivestyle",
    f"{MOR_PARQUET}/v6_nonpartitioned_rollback",
]
#: MOR tables whose latest slices are base files only (compacted, clustered or overwritten)
MOR_WITHOUT_LOGS = {
    **TXNS_MOR,
    f"{MOR_AVRO}/v9_nonpartitioned_rollback": ["TXN-001", "TXN-002", "TXN-002", "TXN-003"],
    f"{MOR_PARQUET}/v6_simplekeygen_nonhivestyle_overwritetable": OVERWRITTEN,
    f"{MOR_PARQUET}/v6_simplekeygen_hivestyle_no_metafields": STORY,
    f"{MOR_PARQUET}/v6_empty": [],
}
ALL_MOR = [*MOR_WITH_LOGS, *MOR_WITHOUT_LOGS]
ALL_READABLE = [*ALL_COW, *ALL_MOR]

RIDERS = ["rider", "fare", "city"]
V8_TRIPS_RO = [  # the compacted base files: A->0, F and J deleted; G->0 sits in a log written after it
    ("rider-A", 0.0, "san_francisco"),
    ("rider-C", 27.7, "san_francisco"),
    ("rider-D", 33.9, "san_francisco"),
    ("rider-E", 93.5, "san_francisco"),
    ("rider-G", 43.4, "sao_paulo"),
    ("rider-I", 41.06, "chennai"),
]
EIGHT_TRIPS = [
    ("rider-A", 19.1, "san_francisco"),
    ("rider-C", 27.7, "san_francisco"),
    ("rider-D", 33.9, "san_francisco"),
    ("rider-E", 93.5, "san_francisco"),
    ("rider-F", 34.15, "sao_paulo"),
    ("rider-G", 43.4, "sao_paulo"),
    ("rider-I", 41.06, "chennai"),
    ("rider-J", 17.85, "chennai"),
]


# -- fixtures and helpers --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def table_path(tmp_path_factory) -> Callable[[str], Path]:
    """Unpack a fixture (zip path below FIXTURES, without `.zip`) once per module; returns its base path."""
    root = tmp_path_factory.mktemp("hudi_rs_fixtures")
    unpacked: dict[str, Path] = {}

    def get(relative: str) -> Path:
        if relative not in unpacked:
            unpacked[relative] = unzip_fixture(f"{relative}.zip", root / relative.replace("/", "__"))
        return unpacked[relative]

    return get


@pytest.fixture(scope="module")
def open_table(table_path) -> Callable[[str], HudiTable]:
    return lambda relative: HudiTable.open(table_path(relative))


@pytest.fixture
def private_copy(tmp_path) -> Callable[[str], Path]:
    """A fresh copy of a fixture for tests that damage it."""
    return lambda relative: unzip_fixture(f"{relative}.zip", tmp_path)


def rs_read(
    path: Path,
    *,
    as_of: str | None = None,
    read_optimized: bool = False,
    incremental: tuple[str, str | None] | None = None,
    filters: Sequence[tuple[str, str, str]] = (),
    projection: Sequence[str] | None = None,
    options: dict[str, str] | None = None,
) -> pa.Table | None:
    """hudi-rs's answer (None for no batches at all)."""
    hudi_options = dict(options or {})
    if read_optimized:
        hudi_options["hoodie.read.use.read_optimized.mode"] = "true"
    kwargs: dict = {"hudi_options": hudi_options}
    if filters:
        kwargs["filters"] = list(filters)
    if projection is not None:
        kwargs["projection"] = list(projection)
    opts = hudi.HudiReadOptions(**kwargs)
    if as_of is not None:
        opts = opts.with_as_of_timestamp(as_of)
    if incremental is not None:
        start, end = incremental
        opts = opts.with_query_type(hudi.HudiQueryType.Incremental).with_start_timestamp(start)
        if end is not None:
            opts = opts.with_end_timestamp(end)
    batches = hudi.HudiTable(str(path)).read(opts)
    return pa.Table.from_batches(batches) if batches else None


def without_meta(t: pa.Table) -> pa.Table:
    return t.select([c for c in t.column_names if c not in META_FIELDS])


def sorted_rows(t: pa.Table) -> list[dict]:
    return sorted(t.to_pylist(), key=repr)


def assert_same_as_hudi_rs(ours: pa.Table, theirs: pa.Table | None, *, relative: str, same_types: bool = True):
    """Same columns in the same order, same types (nullability aside) and the same multiset of rows.

    `populate.meta.fields=false` tables: hudi-rs leaves the `_hoodie_*` columns out, we return them as stored
    (null) - only the data columns are compared. `same_types=False` lets a column's type follow the table's
    latest schema (what hudi-rs does under time travel) as long as every value is the same.
    """
    if theirs is None:
        assert ours.num_rows == 0, f"{relative}: hudi-rs returns no rows, we return {ours.num_rows}"
        return
    if "no_metafields" in relative:
        assert ours.column_names[: len(META_FIELDS)] == list(META_FIELDS)
        ours = without_meta(ours)
    assert ours.column_names == theirs.column_names, relative
    if same_types:
        assert [f.type for f in ours.schema] == [f.type for f in theirs.schema], relative
    else:
        ours = pa.table([pc.cast(ours[f.name], f.type) for f in theirs.schema], schema=theirs.schema)
    assert ours.num_rows == theirs.num_rows, relative
    assert sorted_rows(ours) == sorted_rows(theirs), relative


def story_rows(t: pa.Table) -> list[tuple]:
    return sorted((r["id"], r["name"], r["isActive"]) for r in t.select(["id", "name", "isActive"]).to_pylist())


def trips(t: pa.Table) -> list[tuple]:
    return sorted(tuple(r.values()) for r in t.select(RIDERS).to_pylist())


def txn_ids(t: pa.Table) -> list[str]:
    return sorted(t.column("txn_id").to_pylist())


def write_times(table: HudiTable) -> list[tuple[str, str]]:
    """(requested, completion) of the completed data-changing instants, in completion order."""
    tl = table.timeline()
    return [(i.requested_time, tl.completion_time(i)) for i in sorted(tl.completed_writes(), key=tl.completion_time)]


def expected_ids(relative: str) -> list:
    return {**SAMPLE_COW, **TXNS_COW, **TIMEBASED_V9, **MOR_WITHOUT_LOGS}[relative]


def check_expected(relative: str, t: pa.Table) -> None:
    expected = expected_ids(relative)
    if expected and isinstance(expected[0], tuple):
        assert story_rows(t) == expected
    elif expected:
        assert txn_ids(t) == expected
    else:
        assert t.num_rows == 0


# -- snapshot reads --------------------------------------------------------------------------------


@pytest.mark.parametrize("relative", ALL_COW)
def test_cow_snapshot_matches_catalogue_and_hudi_rs(open_table, table_path, relative):
    table = open_table(relative)
    assert table.properties.table_type == "COPY_ON_WRITE"
    ours = table.read()
    check_expected(relative, ours)
    assert ours.column_names[: len(META_FIELDS)] == list(META_FIELDS)
    assert_same_as_hudi_rs(ours, rs_read(table_path(relative)), relative=relative)


@pytest.mark.parametrize("relative", list(MOR_WITHOUT_LOGS))
def test_mor_snapshot_without_logs_in_latest_slices_matches_catalogue_and_hudi_rs(open_table, table_path, relative):
    table = open_table(relative)
    assert table.properties.table_type == "MERGE_ON_READ"
    assert all(not s.log_files for s in table.file_system_view().latest_slices())
    ours = table.read()
    check_expected(relative, ours)
    assert_same_as_hudi_rs(ours, rs_read(table_path(relative)), relative=relative)


def test_empty_tables_read_as_zero_rows_with_the_create_schema(open_table):
    for relative in (f"{COW}/v6_empty", f"{COW}/v8_empty", f"{MOR_PARQUET}/v6_empty"):
        t = open_table(relative).read()
        assert t.num_rows == 0
        assert t.column_names == [*META_FIELDS, "id", "name", "isActive"], relative


def test_insert_overwrite_table_hides_the_replaced_file_groups(open_table, table_path):
    relative = f"{COW}/v6_simplekeygen_nonhivestyle_overwritetable"
    table = open_table(relative)
    tl = table.timeline()
    assert [i.action for i in tl.completed_writes()] == ["commit", "commit", "replacecommit"]
    view = table.file_system_view()
    assert len(view.replaced) == 3
    live = {g.id for g in view.file_groups()}
    assert live and not live & view.replaced
    assert story_rows(table.read()) == OVERWRITTEN
    assert [r["byteField"] for r in table.read(columns=["byteField"]).to_pylist()] == [30]


def test_v9_insert_overwrite_of_one_partition(open_table, table_path):
    relative = f"{COW}/v9_txns_simple_meta"
    table = open_table(relative)
    assert any(i.action == Action.REPLACE_COMMIT for i in table.timeline().completed_writes())
    eu = table.read(filters=[("region", "=", "eu")])
    assert txn_ids(eu) == ["TXN-011", "TXN-012", "TXN-018"]
    assert_same_as_hudi_rs(eu, rs_read(table_path(relative), filters=[("region", "=", "eu")]), relative=relative)


@pytest.mark.parametrize("relative", LANCE + LANCE_MOR)
def test_lance_base_files_are_refused_with_an_error(open_table, table_path, relative):
    table = open_table(relative)
    with pytest.raises(InvalidTableError, match=r"\.lance"):
        table.read(read_optimized=True)
    assert rs_read(table_path(relative), read_optimized=True) is not None  # hudi-rs does read them


# -- merge-on-read ---------------------------------------------------------------------------------


@pytest.mark.parametrize("relative", MOR_WITH_LOGS + LANCE_MOR)
def test_mor_snapshot_that_needs_log_merging_is_refused(open_table, relative):
    table = open_table(relative)
    assert any(s.log_files for s in table.file_system_view().latest_slices())
    with pytest.raises(InvalidInputError, match=r"read_optimized=True"):
        table.read()
    with pytest.raises(InvalidInputError, match=r"log files"):
        table.read(columns=["_hoodie_commit_time"])  # a projection does not get around it


@pytest.mark.parametrize("relative", ALL_MOR)
def test_read_optimized_matches_hudi_rs(open_table, table_path, relative):
    table = open_table(relative)
    ours = table.read(read_optimized=True)
    assert_same_as_hudi_rs(ours, rs_read(table_path(relative), read_optimized=True), relative=relative)
    # read-optimized reads exactly the newest base file of every live file group
    names = {b.name.file_name for b in table.file_system_view().latest_base_files()}
    assert set(ours.column("_hoodie_file_name").to_pylist()) <= names


def test_read_optimized_expected_contents(open_table):
    # the update of rider-D (fare 25.0) lives in a log file: RO still shows the base value
    assert trips(open_table(f"{TRIPS_MOR}/v6_trips_8i1u").read(read_optimized=True)) == EIGHT_TRIPS
    # the deletes of A, C, D live in a delete block: RO still shows all 8
    assert trips(open_table(f"{TRIPS_MOR}/v6_trips_8i3d").read(read_optimized=True)) == EIGHT_TRIPS
    assert trips(open_table(V8_TRIPS).read(read_optimized=True)) == V8_TRIPS_RO
    # Alice's update is in the log, so RO shows Alice active
    assert story_rows(open_table(f"{MOR_PARQUET}/v6_nonpartitioned").read(read_optimized=True)) == [
        (1, "Alice", True), (2, "Bob", False), (3, "Carol", True), (4, "Diana", True),
    ]
    assert open_table(f"{MOR_AVRO}/v9_timebasedkeygen_nonhivestyle").read(read_optimized=True).num_rows == 7


def test_read_optimized_on_cow_is_the_snapshot(open_table):
    table = open_table(f"{COW}/v8_nonpartitioned")
    assert sorted_rows(table.read(read_optimized=True)) == sorted_rows(table.read())


# -- time travel -----------------------------------------------------------------------------------


@pytest.mark.parametrize("relative", STORY_TABLES)
def test_time_travel_to_the_first_commit(open_table, table_path, relative):
    table = open_table(relative)
    (first_req, first_done), (second_req, _) = write_times(table)
    assert story_rows(table.read(as_of=first_req)) == STORY_FIRST_COMMIT
    assert story_rows(table.read(as_of=first_done)) == STORY_FIRST_COMMIT
    assert story_rows(table.read(as_of=second_req)) == STORY
    assert_same_as_hudi_rs(table.read(as_of=first_req), rs_read(table_path(relative), as_of=first_req),
                           relative=relative)


def test_time_travel_through_an_insert_overwrite(open_table):
    table = open_table(f"{COW}/v6_simplekeygen_nonhivestyle_overwritetable")
    (first, _), (second, _), (third, _) = write_times(table)
    assert story_rows(table.read(as_of=first)) == STORY_FIRST_COMMIT
    assert story_rows(table.read(as_of=second)) == STORY
    assert story_rows(table.read(as_of=third)) == OVERWRITTEN


def test_time_travel_before_the_first_commit_is_empty(open_table, table_path):
    relative = f"{COW}/v8_nonpartitioned"
    table = open_table(relative)
    assert table.read(as_of="20000101000000000").num_rows == 0
    assert rs_read(table_path(relative), as_of="20000101000000000") is None


def test_time_travel_accepts_iso_and_epoch_millis(open_table):
    table = open_table(f"{COW}/v8_nonpartitioned")  # a UTC timeline
    (first, _), _ = write_times(table)
    dt = parse_instant_time(first)
    expected = story_rows(table.read(as_of=first))
    assert expected == STORY_FIRST_COMMIT
    assert story_rows(table.read(as_of=dt.isoformat().replace("+00:00", "Z"))) == expected
    assert story_rows(table.read(as_of=str(int(dt.timestamp() * 1000)))) == expected


def as_of_points(table: HudiTable) -> list[str]:
    """Every write's requested time; its completion time too where that is cheap (v6/v8 tables: few commits)."""
    points = set()
    for requested, completed in write_times(table):
        points.add(requested)
        if table.properties.table_version < 9:
            points.add(completed)
    return sorted(points)


#: the `_meta` twins of the v9 tables tell the same story as their `_nometa` twins (MDT aside, tested below)
NO_TWINS = [r for r in ALL_COW if not r.endswith("_meta")]


@pytest.mark.parametrize("relative", NO_TWINS)
def test_time_travel_to_every_instant_matches_hudi_rs(open_table, table_path, relative):
    """As of each commit (the v9 timestamp-keygen tables flip a column's type in later commits: hudi-rs
    then uses the latest type, we the type as of the instant; the values must agree)."""
    table = open_table(relative)
    for t in as_of_points(table):
        assert_same_as_hudi_rs(table.read(as_of=t), rs_read(table_path(relative), as_of=t),
                               relative=f"{relative} as of {t}", same_types=False)


@pytest.mark.parametrize("relative", [r for r in ALL_MOR if "empty" not in r and not r.endswith("_meta")])
def test_read_optimized_time_travel_matches_hudi_rs(open_table, table_path, relative):
    table = open_table(relative)
    for t in as_of_points(table):
        ours = table.read(as_of=t, read_optimized=True)
        theirs = rs_read(table_path(relative), as_of=t, read_optimized=True)
        assert_same_as_hudi_rs(ours, theirs, relative=f"{relative} as of {t}", same_types=False)


def test_v8_mor_read_optimized_time_travel_steps(open_table):
    table = open_table(V8_TRIPS)
    times = write_times(table)
    assert len(times) == 7
    compaction_requested = "20251220210129235"
    for requested, _ in times:
        rows = trips(table.read(as_of=requested, read_optimized=True))
        # before the compaction only the first deltacommit's base files exist
        assert rows == (EIGHT_TRIPS if requested < compaction_requested else V8_TRIPS_RO), requested


@pytest.mark.parametrize(
    ("relative", "expected"),
    [
        (f"{TRIPS_MOR}/v6_trips_8i1u", EIGHT_TRIPS),  # catalogue: as_of first, D=33.9
        (f"{TRIPS_MOR}/v6_trips_8i3d", EIGHT_TRIPS),  # catalogue: as_of first shows all 8
        (f"{MOR_PARQUET}/v6_nonpartitioned", STORY_FIRST_COMMIT),
    ],
)
def test_v6_mor_snapshot_as_of_a_commit_before_any_log_needs_no_merging(open_table, table_path, relative, expected):
    """As of the first deltacommit no log file existed yet: the snapshot is the first commit's base files."""
    table = open_table(relative)
    (first, _), *_ = write_times(table)
    ours = table.read(as_of=first)
    assert (trips(ours) if expected is EIGHT_TRIPS else story_rows(ours)) == expected
    assert_same_as_hudi_rs(ours, rs_read(table_path(relative), as_of=first), relative=relative)


def test_v8_mor_snapshot_as_of_the_first_deltacommit(open_table, table_path):
    # layout 2 names each log after its deltacommit, so logs of later deltacommits are not visible
    table = open_table(V8_TRIPS)
    (first, _), *_ = write_times(table)
    ours = table.read(as_of=first)
    assert trips(ours) == EIGHT_TRIPS
    assert_same_as_hudi_rs(ours, rs_read(table_path(V8_TRIPS), as_of=first), relative=V8_TRIPS)


# -- incremental -----------------------------------------------------------------------------------


def test_v8_incremental_between_completion_times(open_table, table_path):
    relative = f"{COW}/v8_nonpartitioned"
    table = open_table(relative)
    (r1, c1), (r2, c2) = write_times(table)
    assert r1 < c1 < r2 < c2
    assert story_rows(table.incremental(BEGINNING, c1)) == STORY_FIRST_COMMIT
    second = table.incremental(c1, c2)
    assert story_rows(second) == [(1, "Alice", False), (4, "Diana", True)]
    assert set(second.column("_hoodie_commit_time").to_pylist()) == {r2}  # rows carry the requested time
    assert story_rows(table.incremental(c1)) == story_rows(second)  # open end = up to the latest commit
    assert table.incremental(c2).num_rows == 0
    # (c1, r2] holds no completion: nothing, although the second commit was requested in it
    assert table.incremental(c1, r2).num_rows == 0


@pytest.mark.parametrize("relative", [f"{COW}/v8_nonpartitioned", f"{COW}/v8_complexkeygen_hivestyle",
                                      f"{COW}/v8_simplekeygen_nonhivestyle"])
def test_v8_incremental_ranges_match_hudi_rs(open_table, table_path, relative):
    """Every (begin, end] over all requested and completion times: v8 ranges are over completion times."""
    table = open_table(relative)
    bounds = sorted({BEGINNING, *(t for pair in write_times(table) for t in pair)})
    for i, begin in enumerate(bounds):
        for end in bounds[i + 1:]:
            theirs = rs_read(table_path(relative), incremental=(begin, end))
            assert_same_as_hudi_rs(table.incremental(begin, end), theirs, relative=f"{relative} ({begin}, {end}]")


@pytest.mark.parametrize("relative", [r for r in NO_TWINS if "no_metafields" not in r and "empty" not in r])
def test_incremental_commit_by_commit_matches_hudi_rs(open_table, table_path, relative):
    table = open_table(relative)
    begin = BEGINNING
    total = 0
    for _, completed in write_times(table):
        ours = table.incremental(begin, completed)
        total += ours.num_rows
        assert_same_as_hudi_rs(ours, rs_read(table_path(relative), incremental=(begin, completed)),
                               relative=f"{relative} ({begin}, {completed}]", same_types=False)
        begin = completed
    assert total > 0


def test_incremental_of_an_insert_overwrite_is_its_new_rows(open_table):
    table = open_table(f"{COW}/v6_simplekeygen_nonhivestyle_overwritetable")
    (_, c1), (_, c2), (_, c3) = write_times(table)
    assert story_rows(table.incremental(c2, c3)) == OVERWRITTEN
    assert story_rows(table.incremental(c1, c2)) == [(1, "Alice", False), (4, "Diana", True)]


def test_incremental_with_columns_and_filters(open_table, table_path):
    relative = f"{COW}/v8_complexkeygen_hivestyle"
    table = open_table(relative)
    (_, c1), (_, c2) = write_times(table)
    ours = table.incremental(c1, c2, columns=["id", "name"], filters=[("byteField", "=", 10)])
    assert ours.column_names == ["id", "name"]
    assert ours.to_pylist() == [{"id": 1, "name": "Alice"}]
    theirs = rs_read(table_path(relative), incremental=(c1, c2), projection=["id", "name"],
                     filters=[("byteField", "=", "10")])
    assert_same_as_hudi_rs(ours, theirs, relative=relative)


@pytest.mark.parametrize("relative", [f"{COW}/v6_simplekeygen_hivestyle_no_metafields",
                                      f"{COW}/v8_simplekeygen_hivestyle_no_metafields"])
def test_incremental_on_a_table_without_meta_fields_does_not_silently_return_nothing(
    open_table, table_path, relative
):
    """No `_hoodie_commit_time` is stored: either answer from the commit's files (as hudi-rs does: all 4 rows
    of the only commit) or refuse clearly (as Java does) - but never an empty result that looks right."""
    table = open_table(relative)
    ((_, completed),) = write_times(table)
    try:
        ours = table.incremental(BEGINNING, completed)
    except InvalidInputError:
        return
    assert ours.num_rows == 4
    assert_same_as_hudi_rs(ours, rs_read(table_path(relative), incremental=(BEGINNING, completed)), relative=relative)


@pytest.mark.parametrize("begin", ["00000000000000000", "000"])
def test_incremental_from_hudis_conventional_beginning(open_table, begin):
    """Hudi's docs start incremental pulls at "000" and its init instant is all zeros: both mean everything."""
    table = open_table(f"{COW}/v8_nonpartitioned")
    (_, c1), (_, c2) = write_times(table)
    assert story_rows(table.incremental(begin, c1)) == STORY_FIRST_COMMIT
    assert sorted_rows(table.incremental(begin)) == sorted_rows(table.incremental(BEGINNING, c2))


def test_incremental_rejects_a_bad_time(open_table):
    with pytest.raises(HudiOpsError, match="not a time"):
        open_table(f"{COW}/v8_nonpartitioned").incremental("yesterday")


# -- projection and filters ------------------------------------------------------------------------


def test_projection_returns_exactly_the_columns_in_order(open_table, table_path):
    relative = f"{COW}/v8_nonpartitioned"
    table = open_table(relative)
    ours = table.read(columns=["name", "id"])
    assert ours.column_names == ["name", "id"]
    assert sorted(ours.to_pylist(), key=lambda r: r["id"])[0] == {"name": "Alice", "id": 1}
    assert_same_as_hudi_rs(ours, rs_read(table_path(relative), projection=["name", "id"]), relative=relative)
    assert table.read(columns=["_hoodie_record_key"]).column_names == ["_hoodie_record_key"]


def test_projection_of_an_unknown_column_is_an_error(open_table):
    with pytest.raises(InvalidInputError, match="nope"):
        open_table(f"{COW}/v8_nonpartitioned").read(columns=["id", "nope"])


SAMPLE_FILTERS = [
    [("intField", ">", "20000")],
    [("longField", "<=", "200000")],
    [("floatField", ">", "2.0")],
    [("doubleField", "<", "3.0")],
    [("decimalField", ">", "20000")],
    [("dateField", ">=", "2023-04-02")],
    [("timestampField", "<", "2023-04-03T00:00:00Z")],
    [("isActive", "=", "true")],
    [("name", "IN", "Alice,Diana")],
    [("name", "NOT IN", "Alice,Diana")],
    [("id", "=", "3")],
    [("id", "!=", "3"), ("isActive", "=", "false")],
    [("byteField", "IN", "10,30")],  # partition columns
    [("byteField", ">=", "10"), ("byteField", "<", "20"), ("shortField", "!=", "100")],
    [("shortField", "=", "300")],
    [("byteField", "=", "99")],
]


@pytest.fixture(scope="module")
def full_read(open_table) -> Callable[[str], pa.Table]:
    """The unfiltered snapshot of a table, read once per module."""
    cache: dict[str, pa.Table] = {}

    def get(relative: str) -> pa.Table:
        if relative not in cache:
            cache[relative] = open_table(relative).read()
        return cache[relative]

    return get


@pytest.mark.parametrize("relative", [f"{COW}/v6_complexkeygen_hivestyle", f"{COW}/v8_simplekeygen_nonhivestyle",
                                      f"{COW}/v8_nonpartitioned"])
@pytest.mark.parametrize("filters", SAMPLE_FILTERS, ids=lambda f: " & ".join(" ".join(c) for c in f))
def test_filters_match_hudi_rs_and_a_filter_after_reading(open_table, table_path, full_read, relative, filters):
    table = open_table(relative)
    ours = table.read(filters=filters)
    assert_same_as_hudi_rs(ours, rs_read(table_path(relative), filters=filters), relative=relative)
    # partition pruning must not change the answer: the same as filtering every row ourselves
    everything = full_read(relative)
    mask = None
    for name, op, value in filters:
        col = everything[name]
        typed = [pa.scalar(v).cast(col.type) for v in value.split(",")] if op in ("IN", "NOT IN") else None
        scalar = pa.scalar(value).cast(col.type) if typed is None else None
        e = {
            "=": lambda c, s=scalar: pc.equal(c, s), "!=": lambda c, s=scalar: pc.not_equal(c, s),
            "<": lambda c, s=scalar: pc.less(c, s), "<=": lambda c, s=scalar: pc.less_equal(c, s),
            ">": lambda c, s=scalar: pc.greater(c, s), ">=": lambda c, s=scalar: pc.greater_equal(c, s),
            "IN": lambda c, t=typed: pc.is_in(c, pa.array([v.as_py() for v in t], c.type)),
            "NOT IN": lambda c, t=typed: pc.invert(pc.is_in(c, pa.array([v.as_py() for v in t], c.type))),
        }[op](col)
        mask = e if mask is None else pc.and_(mask, e)
    assert sorted_rows(ours) == sorted_rows(everything.filter(mask))


def test_catalogue_filter_on_complexkeygen(open_table):
    # byteField in [10, 20) and shortField != 100 -> Alice (inactive) and Carol
    table = open_table(f"{COW}/v6_complexkeygen_hivestyle")
    got = table.read(filters=[("byteField", ">=", 10), ("byteField", "<", 20), ("shortField", "!=", 100)])
    assert story_rows(got) == [(1, "Alice", False), (3, "Carol", True)]


def test_filter_values_may_be_python_values_or_strings(open_table):
    table = open_table(f"{COW}/v8_complexkeygen_hivestyle")
    for typed, text in [
        (("byteField", "in", [10, 30]), ("byteField", "IN", "10,30")),
        (("name", "in", ["Alice", "Diana"]), ("name", "IN", "Alice,Diana")),
        (("isActive", "=", True), ("isActive", "=", "true")),
        (("intField", ">", 20000), ("intField", ">", "20000")),
        (("name", "not in", ("Bob",)), ("name", "NOT IN", "Bob")),
    ]:
        assert story_rows(table.read(filters=[typed])) == story_rows(table.read(filters=[text])), typed


@pytest.mark.parametrize(
    ("relative", "filters", "expected"),
    [
        (f"{COW}/v9_txns_simple_nometa", [("region", "=", "eu")], ["TXN-011", "TXN-012", "TXN-018"]),
        (f"{COW}/v9_txns_complex_nometa", [("region", "IN", "eu,apac")], None),
        (f"{COW}/v9_txns_simple_overwrite", [("region", "!=", "us")], None),  # non-hive-style paths
        (f"{COW}/v6_timebasedkeygen_nonhivestyle", [("ts_str", "=", "2023-04-03T12:01:00.123Z")], [(3, "Carol", True)]),
        (f"{COW}/v6_timebasedkeygen_nonhivestyle", [("ts_str", ">", "2023-04-02")], None),
        (f"{COW}/v9_timebasedkeygen_epochmillis", [("ts_millis", "=", "1705311000000")], ["TXN-001", "TXN-001"]),
        (f"{COW}/v9_timebasedkeygen_unixtimestamp", [("ts_epoch", ">=", "1705367700")], None),
    ],
)
def test_partition_column_filters_on_other_layouts(open_table, table_path, full_read, relative, filters, expected):
    """A timestamp-keygen partition path is a formatted value: filters on the source column filter rows."""
    table = open_table(relative)
    ours = table.read(filters=filters)
    if expected is not None:
        assert (story_rows(ours) if isinstance(expected[0], tuple) else txn_ids(ours)) == expected
    assert ours.num_rows > 0
    name, op, value = filters[0]
    everything = full_read(relative)
    col = everything[name]
    if op == "IN":
        mask = pc.is_in(col, pa.array(value.split(","), col.type))
    else:
        fn = {"=": pc.equal, "!=": pc.not_equal, ">": pc.greater, ">=": pc.greater_equal}[op]
        mask = fn(col, pa.scalar(value).cast(col.type))
    assert sorted_rows(ours) == sorted_rows(everything.filter(mask))
    assert_same_as_hudi_rs(ours, rs_read(table_path(relative), filters=filters), relative=relative)


@pytest.mark.parametrize(
    ("relative", "pruned_partition", "filters"),
    [
        (f"{COW}/v8_simplekeygen_nonhivestyle", "30", [("byteField", "<", 30)]),
        (f"{COW}/v6_complexkeygen_hivestyle", "byteField=20/shortField=100", [("shortField", "=", 300)]),
        (f"{COW}/v9_txns_simple_nometa", "region=us", [("region", "IN", ["eu", "apac"])]),
    ],
)
def test_partition_pruning_never_opens_the_pruned_files(private_copy, relative, pruned_partition, filters):
    path = private_copy(relative)
    for f in (path / pruned_partition).glob("*.parquet"):
        f.write_bytes(b"not parquet")
    table = HudiTable.open(path)
    assert table.read(filters=filters).num_rows > 0
    with pytest.raises(InvalidTableError):
        table.read()


@pytest.mark.parametrize(
    ("filters", "match"),
    [
        ([("nope", "=", 1)], "nope"),
        ([("id", "~", 1)], "operator"),
        ([("id", "=", "abc")], "abc"),
        ([("id", "=")], "column, op, value"),
    ],
)
def test_bad_filters_are_input_errors(open_table, filters, match):
    with pytest.raises(InvalidInputError, match=match):
        open_table(f"{COW}/v8_nonpartitioned").read(filters=filters)


# -- the metadata table is never used --------------------------------------------------------------


@pytest.mark.parametrize(
    ("relative", "read_optimized"),
    [(V8_TRIPS, True), (f"{COW}/v9_txns_simple_meta", False), (f"{MOR_AVRO}/v9_txns_nonpart_meta", False),
     (f"{COW}/v9_timebasedkeygen_epochmillis", False)],
)
def test_tables_with_a_metadata_table_are_read_by_listing(private_copy, table_path, relative, read_optimized):
    path = private_copy(relative)
    assert "hoodie.table.metadata.partitions=" in (path / ".hoodie" / "hoodie.properties").read_text()
    expected = rs_read(table_path(relative), read_optimized=read_optimized)
    listed = rs_read(table_path(relative), read_optimized=read_optimized, options={"hoodie.metadata.enable": "false"})
    assert sorted_rows(expected) == sorted_rows(listed)
    damaged = 0
    for root, _dirs, files in os.walk(path / ".hoodie" / "metadata"):
        for name in files:
            Path(root, name).write_bytes(b"")  # every MDT file (timeline, HFiles, logs) is now unreadable
            damaged += 1
    assert damaged > 10
    table = HudiTable.open(path)
    assert_same_as_hudi_rs(table.read(read_optimized=read_optimized), expected, relative=relative)
    assert not any(p.startswith(".hoodie") for p in table.file_system_view().partitions())


# -- timeline and file-system view -----------------------------------------------------------------


def test_v6_timeline_is_layout_1_without_completion_times(open_table):
    table = open_table(f"{COW}/v6_nonpartitioned")
    tl = table.timeline()
    assert tl.layout_version == 1
    writes = tl.completed_writes()
    assert [i.action for i in writes] == ["commit", "commit"]
    assert all(i.completion_time is None and tl.completion_time(i) == i.requested_time for i in writes)
    assert [i.state for i in tl.states_of(writes[0].requested_time)] == [State.REQUESTED, State.INFLIGHT,
                                                                        State.COMPLETED]
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
    assert [i.action for i in tl.states_of("20251220210129235")] == ["compaction", "compaction", "commit"]
    assert [i.action for i in tl.completed if i.action not in Action.WRITE_ACTIONS] == ["indexing"]
    assert tl.pending == ()
    assert tl.completed_writes()[-1].requested_time == "20251220210130911"
    assert tl.max_time == "20251220210131755"


def test_v8_mor_completion_time_slicing(open_table):
    """hudi-v8.md §3.2: a log joins the slice with the greatest base instant <= its deltacommit's completion."""
    view = open_table(V8_TRIPS).file_system_view()
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
    latest = {s.partition_path: s for s in view.latest_slices()}
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
    table = HudiTable.open(path)
    chennai = next(g for g in table.file_system_view().file_groups() if g.id.partition_path == "city=chennai")
    assert [(s.base_instant, [lf.instant_time for lf in s.log_files]) for s in chennai.slices] == [
        ("20251220210129235", ["20251220210128625"]),
        ("20251220210108078", ["20251220210127080"]),
    ]
    rs_slices = hudi.HudiTable(str(path)).get_file_slices(
        hudi.HudiReadOptions(hudi_options={"hoodie.metadata.enable": "false"})
    )
    rs_chennai = next(s for s in rs_slices if s.partition_path == "city=chennai")
    assert list(rs_chennai.log_file_names) == [lf.name.file_name for lf in chennai.latest_slice.log_files]


def test_v8_mor_view_as_of_before_the_compaction(open_table):
    view = open_table(V8_TRIPS).file_system_view(as_of="20251220210128625")
    latest = {s.partition_path: s for s in view.latest_slices()}
    assert {s.base_instant for s in latest.values()} == {"20251220210108078"}
    assert [lf.instant_time for lf in latest["city=chennai"].log_files] == ["20251220210127080", "20251220210128625"]
    # the log written after the as-of instant is not part of the view
    assert [lf.instant_time for lf in latest["city=sao_paulo"].log_files] == ["20251220210125441"]


@pytest.mark.parametrize("relative", ALL_READABLE + LANCE + LANCE_MOR)
def test_latest_file_slices_match_hudi_rs(open_table, table_path, relative):
    ours = sorted(
        (s.partition_path, s.file_id, s.base_file.name.file_name if s.base_file else None,
         tuple(lf.name.file_name for lf in s.log_files))
        for s in open_table(relative).file_system_view().latest_slices()
    )
    rs_table = hudi.HudiTable(str(table_path(relative)))
    theirs = sorted(
        (s.partition_path, s.file_id, s.base_file_name or None, tuple(s.log_file_names))
        for s in rs_table.get_file_slices(hudi.HudiReadOptions(hudi_options={"hoodie.metadata.enable": "false"}))
    )
    assert ours == theirs
