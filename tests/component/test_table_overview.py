"""The table overview behind the timeline view and the CLI, and the chart drawn from it."""

from __future__ import annotations

import time
import xml.etree.ElementTree as ET
from datetime import UTC, datetime, timedelta

import pyarrow as pa
import pytest

from hudi_ops import HudiTable
from hudi_ops.airflow.timeline_chart import ACTION_COLOURS, ROLLED_BACK_COLOUR, timeline_svg
from hudi_ops.read.table_overview import COMPLETED, PENDING, ROLLED_BACK, InstantSpan, TableOverview
from tests.shared_data import unzip_fixture

FAST = {"hoodie.client.heartbeat.interval_in_ms": "100", "hoodie.client.heartbeat.tolerable.misses": "2"}
SVG = "{http://www.w3.org/2000/svg}"


def _batch(ids: list[int], ts: int) -> pa.Table:
    return pa.table({"id": ids, "ts": [ts] * len(ids), "p": ["a" if i % 2 else "b" for i in ids]})


def _abandoned_write(table: HudiTable, ids: list[int]) -> str:
    """A write whose writer stopped before committing: its data files exist, its instant stays pending."""
    client = table.write_client(FAST)
    instant = client.start_commit()
    client.upsert(_batch(ids, 9), instant)
    client.close()  # stops the heartbeat, as a dead writer's stops
    return instant


@pytest.fixture
def table(tmp_path) -> HudiTable:
    t = HudiTable.create(tmp_path / "t", name="t", record_key="id", partition_fields=["p"], ordering_field="ts")
    t.upsert(_batch([1, 2, 3], 1))
    t.upsert(_batch([3, 4], 2))
    return t


def test_spans_mark_completed_rolled_back_and_pending_instants(table):
    failed = _abandoned_write(table, [5])
    time.sleep(0.3)
    [rollback] = table.rollback_failed_writes(dry_run=False, options=FAST)
    pending = _abandoned_write(table, [6])

    overview = TableOverview.load(table.base_path)
    by_time = {s.requested_time: s for s in overview.instants}
    assert by_time[failed] == InstantSpan(failed, "commit", ROLLED_BACK, None, state=ROLLED_BACK,
                                          rolled_back_by=rollback.rollback_instant)
    assert (by_time[pending].status, by_time[pending].state, by_time[pending].completion_time) == \
        (PENDING, "inflight", None)
    assert by_time[rollback.rollback_instant].action == "rollback"
    assert [s.status for s in overview.instants].count(COMPLETED) == 3  # two commits and the rollback
    assert [s.requested_time for s in overview.instants] == sorted(by_time)
    for s in overview.instants:
        if s.status == COMPLETED:
            assert s.completed_at >= s.requested_at


def test_latest_commits_and_file_groups(table):
    overview = TableOverview.load(table.base_path, latest_commits=1)
    [latest] = overview.latest_commits
    second = table.timeline().completed_writes()[-1]
    assert (latest.instant, latest.completed, latest.operation) == (second.requested_time, second.completion_time,
                                                                    "UPSERT")
    # both files rewritten: 1 and 3 in partition a (3 updated), 2 and 4 in b (4 inserted)
    assert (latest.inserts, latest.updates, latest.writes, latest.partitions) == (1, 1, 4, 2)
    assert {(g.partition, g.slices) for g in overview.file_groups} == {("a", 2), ("b", 2)}
    files = {f.path: f.size for f in table.meta.storage.walk_files("") if f.path.endswith(".parquet")}
    for g in overview.file_groups:
        assert g.base_instant == second.requested_time and files[f"{g.partition}/{g.base_file}"] == g.bytes


@pytest.mark.parametrize(("fixture", "completion_recorded"), [
    ("sample_table/mor/avro/v9_nonpartitioned_rollback.zip", True),
    ("sample_table/mor/parquet/v6_nonpartitioned_rollback.zip", False),
])
def test_spark_written_tables_show_what_their_rollbacks_undid(tmp_path, fixture, completion_recorded):
    overview = TableOverview.load(unzip_fixture(fixture, tmp_path))
    rolled_back = [s for s in overview.instants if s.status == ROLLED_BACK]
    rollbacks = [s for s in overview.instants if s.action == "rollback"]
    assert len(rolled_back) == len(rollbacks) == 1
    assert rolled_back[0].action == "deltacommit"
    assert rolled_back[0].rolled_back_by == rollbacks[0].requested_time > rolled_back[0].requested_time
    # timeline layout 1 (table version 6) does not record completion times
    assert all((s.completion_time is not None) == completion_recorded for s in overview.instants
               if s.status == COMPLETED)


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
