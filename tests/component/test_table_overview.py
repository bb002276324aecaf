"""The table overview behind the timeline view and the CLI, and the chart drawn from it.

Checked on the real Spark-written fixture tables (hudi-rs test data, shared/reference/hudi-rs-oracle.md §4)
against hudi-rs, an independent reader (its timeline, commit metadata and file slices), the timeline's file
names on disk and the catalogue's story of each table. Pending instants are made by deleting the completed
instant file of a private copy, as a writer that died before committing leaves it.
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import hudi
import pytest

from hudi_ops.airflow.ui.timeline_chart import ACTION_COLOURS, ROLLED_BACK_COLOUR, timeline_svg
from hudi_ops.read.table_overview import COMPLETED, PENDING, ROLLED_BACK, InstantSpan, TableOverview
from tests.shared_data import unzip_fixture

SVG = "{http://www.w3.org/2000/svg}"

V6_ROLLBACK = "sample_table/mor/parquet/v6_nonpartitioned_rollback"
V9_ROLLBACK = "sample_table/mor/avro/v9_nonpartitioned_rollback"
V8_TRIPS = "quickstart_trips_table/mor/avro/v8_trips_8i3u1d"
#: one table per kind of write: rollbacks, a compaction, an insert overwrite, clustering, deletes, partitions
TABLES = [
    V6_ROLLBACK,
    V9_ROLLBACK,
    V8_TRIPS,
    "sample_table/cow/v6_simplekeygen_nonhivestyle_overwritetable",
    "sample_table/cow/v8_complexkeygen_hivestyle",
    "sample_table/cow/v9_txns_simple_nometa",
    "sample_table/mor/avro/v9_txns_simple_nometa",
]


@pytest.fixture
def copy_of(tmp_path) -> Callable[[str], Path]:
    return lambda relative: unzip_fixture(f"{relative}.zip", tmp_path)


def timeline_dir(base: Path) -> Path:
    return base / ".hoodie" / "timeline" if (base / ".hoodie" / "timeline").is_dir() else base / ".hoodie"


def completed_files(base: Path) -> dict[str, tuple[str, str | None]]:
    """requested time -> (action, completion time) from the completed instant files' names on disk."""
    out = {}
    for f in timeline_dir(base).iterdir():
        m = re.fullmatch(r"(\d{17})(?:_(\d{17}))?\.(\w+)", f.name)
        if m and m[3] != "inflight":  # `<time>.inflight` is a pending commit's
            out[m[1]] = (m[3], m[2])
    return out


# -- instant spans ---------------------------------------------------------------------------------


@pytest.mark.parametrize(("relative", "completion_recorded"), [(V9_ROLLBACK, True), (V6_ROLLBACK, False)])
def test_spark_written_tables_show_what_their_rollbacks_undid(fixture_table, relative, completion_recorded):
    """The catalogue: insert, upsert, rollback of the upsert, insert. The rollback removed the upsert's instant
    from the timeline; the overview still shows it, as rolled back by the rollback."""
    base = fixture_table(relative)
    overview = TableOverview.load(base)
    assert [(s.action, s.status) for s in overview.instants] == [
        ("deltacommit", COMPLETED), ("deltacommit", ROLLED_BACK), ("rollback", COMPLETED), ("deltacommit", COMPLETED)]
    first, undone, rollback, last = overview.instants
    assert undone.rolled_back_by == rollback.requested_time > undone.requested_time > first.requested_time
    assert (undone.state, undone.completion_time) == (ROLLED_BACK, None)
    assert undone.requested_time not in completed_files(base)  # only the rollback's metadata names it
    # hudi-rs sees the same completed writes: not the rolled-back one
    rs_done = hudi.HudiTable(str(base)).get_timeline().get_completed_deltacommits()
    assert sorted(i.timestamp for i in rs_done) == [first.requested_time, last.requested_time]
    # completion times are those in the file names; timeline layout 1 (table version 6) records none
    on_disk = completed_files(base)
    for s in (first, rollback, last):
        assert (s.action, s.completion_time) == on_disk[s.requested_time]
        assert (s.completion_time is not None) == completion_recorded
        assert s.completed_at is None or s.completed_at >= s.requested_at


def test_spans_mark_completed_rolled_back_and_pending_instants(copy_of):
    base = copy_of(V9_ROLLBACK)
    last_write = "20260403184302162"
    (timeline_dir(base) / f"{last_write}_20260403184303142.deltacommit").unlink()  # its writer died
    overview = TableOverview.load(base)
    by_time = {s.requested_time: s for s in overview.instants}
    assert by_time[last_write] == InstantSpan(last_write, "deltacommit", PENDING, None, state="inflight")
    [undone] = [s for s in overview.instants if s.status == ROLLED_BACK]
    [rollback] = [s for s in overview.instants if s.action == "rollback"]
    assert undone == InstantSpan(undone.requested_time, "deltacommit", ROLLED_BACK, None, state=ROLLED_BACK,
                                 rolled_back_by=rollback.requested_time)
    assert [s.status for s in overview.instants].count(COMPLETED) == 2  # the first write and the rollback
    assert [s.requested_time for s in overview.instants] == sorted(by_time)
    # the pending write is no commit: hudi-rs does not see it either, and it has no commit stats
    rs_done = hudi.HudiTable(str(base)).get_timeline().get_completed_deltacommits()
    assert last_write not in {i.timestamp for i in rs_done}
    assert last_write not in {c.instant for c in overview.latest_commits}

    # only the requested file left: pending in state requested
    (timeline_dir(base) / f"{last_write}.deltacommit.inflight").unlink()
    assert TableOverview.load(base).instants[-1].state == "requested"


def test_a_rolled_back_write_whose_instant_files_were_left_behind_is_not_pending(copy_of):
    """Hudi deletes the rolled-back instant's files after completing the rollback: a crash in between leaves them."""
    base = copy_of(V9_ROLLBACK)
    undone = "20260403184242950"
    (timeline_dir(base) / f"{undone}.deltacommit.requested").write_bytes(b"")
    overview = TableOverview.load(base)
    assert [s.status for s in overview.instants if s.requested_time == undone] == [ROLLED_BACK]
    assert all(s.status != PENDING for s in overview.instants)


# -- commit stats and file groups ------------------------------------------------------------------


def _rs_commit_stats(base: Path) -> dict[str, dict[str, object]]:
    """What hudi-rs reads from each completed write's metadata, summed the way `hudi-ops commits` shows it."""
    rs_tl = hudi.HudiTable(str(base)).get_timeline()
    out = {}
    for inst in (*rs_tl.get_completed_commits(), *rs_tl.get_completed_deltacommits(),
                 *rs_tl.get_completed_replacecommits()):
        meta = json.loads(rs_tl.get_instant_metadata_in_json(inst))
        stats = [s for group in (meta.get("partitionToWriteStats") or {}).values() for s in group]
        out[inst.timestamp] = {
            "action": inst.action, "operation": meta.get("operationType"), "files": len(stats),
            "writes": sum(s["numWrites"] for s in stats), "inserts": sum(s["numInserts"] for s in stats),
            "updates": sum(s["numUpdateWrites"] for s in stats), "deletes": sum(s["numDeletes"] for s in stats),
            "bytes": sum(s["totalWriteBytes"] for s in stats), "partitions": len({s["partitionPath"] for s in stats}),
        }
    return out


@pytest.mark.parametrize("relative", TABLES)
def test_commit_stats_match_hudi_rs(fixture_table, relative):
    base = fixture_table(relative)
    overview = TableOverview.load(base, latest_commits=1000)
    theirs = _rs_commit_stats(base)
    assert {c.instant for c in overview.latest_commits} == set(theirs)
    on_disk = completed_files(base)
    for c in overview.latest_commits:
        expected = theirs[c.instant]
        assert {k: getattr(c, k) for k in expected} == expected, c.instant
        assert c.completed == (on_disk[c.instant][1] or c.instant)  # layout 1: the requested time
    # newest first, by completion time
    assert [c.completed for c in overview.latest_commits] == sorted((c.completed for c in overview.latest_commits),
                                                                    reverse=True)
    assert overview.latest_commits[0].completed == max(t or r for r, (_, t) in on_disk.items()
                                                       if r in theirs)


def test_latest_commits_are_the_newest_and_say_what_they_did(fixture_table):
    overview = TableOverview.load(fixture_table(V8_TRIPS), latest_commits=2)
    # the catalogue: an auto compaction sits before the last deltacommit (G -> 0 in sao_paulo)
    assert [(c.action, c.operation) for c in overview.latest_commits] == [("deltacommit", "UPSERT_PREPPED"),
                                                                          ("commit", "COMPACT")]
    last, compaction = overview.latest_commits
    assert (last.updates, last.inserts, last.partitions) == (1, 0, 1)
    assert compaction.partitions == 3 and compaction.files == 3
    story = TableOverview.load(fixture_table("sample_table/cow/v8_complexkeygen_hivestyle"))
    first, second = reversed(story.latest_commits)
    assert (first.inserts, first.updates) == (3, 0)  # Alice, Bob, Carol
    assert (second.inserts, second.updates) == (1, 1)  # Diana in, Alice updated


@pytest.mark.parametrize("relative", TABLES)
def test_file_groups_match_hudi_rs(fixture_table, relative):
    base = fixture_table(relative)
    overview = TableOverview.load(base)
    slices = hudi.HudiTable(str(base)).get_file_slices(
        hudi.HudiReadOptions(hudi_options={"hoodie.metadata.enable": "false"}))
    theirs = sorted((s.partition_path, s.file_id, s.creation_instant_time, s.base_file_name or None,
                     len(s.log_file_names), s.total_size_bytes()) for s in slices)
    ours = [(g.partition, g.file_id, g.base_instant, g.base_file, g.log_files, g.bytes) for g in overview.file_groups]
    assert ours == theirs
    for g in overview.file_groups:
        assert g.slices >= 1
        if g.base_file:
            assert g.base_file.startswith(f"{g.file_id}_")
            assert (base / g.partition / g.base_file).stat().st_size <= g.bytes


def test_file_group_slices_count_compactions(fixture_table):
    groups = TableOverview.load(fixture_table(V8_TRIPS)).file_groups
    # one file group per city; the compaction opened a second slice in each
    assert [(g.partition, g.slices, g.base_instant) for g in groups] == [
        (city, 2, "20251220210129235") for city in ("city=chennai", "city=san_francisco", "city=sao_paulo")]


def test_overview_names_the_table(fixture_table):
    base = fixture_table(V9_ROLLBACK)
    overview = TableOverview.load(base)
    rs = hudi.HudiTable(str(base))
    assert (overview.name, overview.table_type, overview.table_version) == (rs.table_name, rs.table_type, 9)
    assert overview.base_path.rstrip("/").endswith(base.name)
    as_dict = overview.to_dict()
    assert as_dict["instants"][0]["requested_time"] == overview.instants[0].requested_time
    assert json.loads(json.dumps(as_dict))["file_groups"][0]["file_id"] == overview.file_groups[0].file_id


# -- the chart -------------------------------------------------------------------------------------


def _span(offset_s: float, action: str, status: str, length_s: float | None = 1.0, **kw) -> InstantSpan:
    start = datetime(2026, 11, 22, 10, 0, tzinfo=UTC) + timedelta(seconds=offset_s)

    def text(t: datetime) -> str:
        return t.strftime("%Y%m%d%H%M%S") + f"{t.microsecond // 1000:03d}"

    end = text(start + timedelta(seconds=length_s)) if length_s is not None else None
    return InstantSpan(text(start), action, status, end if status == COMPLETED else None,
                       rolled_back_by=end if status == ROLLED_BACK else None, **kw)


def test_the_chart_draws_a_bar_per_instant_from_requested_to_completion():
    spans = [_span(0, "commit", COMPLETED, 10), _span(5, "commit", COMPLETED, 30), _span(20, "clean", COMPLETED, 2),
             _span(25, "commit", ROLLED_BACK, 5, state=ROLLED_BACK), _span(40, "commit", PENDING, None,
                                                                           state="inflight")]
    now = spans[0].requested_at + timedelta(seconds=60)
    svg = ET.fromstring(timeline_svg(spans, now=now))
    groups = svg.findall(f"{SVG}g")
    assert [g.get("class") for g in groups] == ["instant completed"] * 3 + ["instant rolled-back", "instant pending"]
    bars = [g.find(f"{SVG}rect") for g in groups]
    x = [float(b.get("x")) for b in bars]
    w = [float(b.get("width")) for b in bars]
    # one time scale: 60 s over the plot's width; bars start and end at their instants' times
    per_s = w[0] / 10
    assert w[1] == pytest.approx(30 * per_s, abs=0.2) and x[1] - x[0] == pytest.approx(5 * per_s, abs=0.2)
    assert x[4] + w[4] == pytest.approx(x[0] + 60 * per_s, abs=0.3)  # pending runs to now
    assert [b.get("fill") for b in bars[:3]] == [ACTION_COLOURS["commit"]] * 2 + [ACTION_COLOURS["clean"]]
    assert bars[3].get("fill") == ROLLED_BACK_COLOUR and groups[3].find(f"{SVG}line") is not None
    assert [r.get("fill") for r in groups[4].findall(f"{SVG}rect")] == [ACTION_COLOURS["commit"], "url(#pending)"]


def test_an_empty_timeline_says_so():
    assert "No instants" in timeline_svg([], now=datetime.now(UTC))


def _chart_rows(svg_text: str) -> list[tuple[str, str, str]]:
    """(class, label, tooltip) of each instant's row."""
    svg = ET.fromstring(svg_text)
    return [(g.get("class"), g.find(f"{SVG}text").text, g.find(f"{SVG}title").text) for g in svg.findall(f"{SVG}g")]


def test_the_chart_of_a_spark_written_table_with_a_rollback_and_a_pending_write(copy_of):
    base = copy_of(V9_ROLLBACK)
    (timeline_dir(base) / "20260403184302162_20260403184303142.deltacommit").unlink()
    overview = TableOverview.load(base)
    now = overview.instants[-1].requested_at + timedelta(minutes=5)
    text = timeline_svg(overview.instants, now=now)
    rows = _chart_rows(text)
    assert [(cls, label) for cls, label, _ in rows] == [
        ("instant completed", "20260403184238571 deltacommit"),
        ("instant rolled-back", "20260403184242950 deltacommit"),
        ("instant completed", "20260403184259077 rollback"),
        ("instant pending", "20260403184302162 deltacommit"),
    ]
    assert rows[0][2] == "deltacommit 20260403184238571: completed 20260403184241921"
    assert rows[1][2] == "deltacommit 20260403184242950: rolled back by 20260403184259077"
    assert rows[3][2] == "deltacommit 20260403184302162: pending (inflight)"
    svg = ET.fromstring(text)
    bars = [g.find(f"{SVG}rect") for g in svg.findall(f"{SVG}g")]
    x = [float(b.get("x")) for b in bars]
    w = [float(b.get("width")) for b in bars]
    # one scale from the first request to now: the first write took 3.35 s, the pending one runs ~5 minutes
    per_s = (x[3] + w[3] - x[0]) / (now - overview.instants[0].requested_at).total_seconds()
    assert w[0] == pytest.approx(3.35 * per_s, abs=0.5)
    assert x[2] - x[0] == pytest.approx(20.506 * per_s, abs=0.5)
    assert bars[1].get("fill") == ROLLED_BACK_COLOUR
    assert [b.get("fill") for b in (bars[0], bars[2])] == [ACTION_COLOURS["deltacommit"], ACTION_COLOURS["rollback"]]
    legend = {t.text for t in svg.findall(f"{SVG}text")}
    assert {"deltacommit", "rollback", "pending", "rolled back"} <= legend


def test_the_chart_of_a_layout_1_table_says_completion_times_are_not_recorded(fixture_table):
    overview = TableOverview.load(fixture_table(V6_ROLLBACK))
    rows = _chart_rows(timeline_svg(overview.instants, now=datetime.now(UTC)))
    completed = [tip for cls, _, tip in rows if cls == "instant completed"]
    assert len(completed) == 3 and all(tip.endswith("completed (time not recorded)") for tip in completed)
