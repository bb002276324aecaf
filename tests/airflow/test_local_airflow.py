"""The platform under a real scheduler: Airflow's api-server, scheduler (LocalExecutor) and dag-processor on
loopback, the repo's DAGs and plugin, real spark-submit jobs and the session's ZooKeeper.

The module runs the RFC-22 scenario of `make demo` once, then checks what it left: the runs, the
retried conflict, the table (through hudi-rs) and the timeline view, in headless Chromium.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from hudi_ops.demo.rfc22 import BACKFILL_DAG, INGEST_DAG, TABLE, Rfc22Demo
from hudi_ops.read.table_overview import COMPLETED, PENDING, ROLLED_BACK, TableOverview
from tests.airflow.chromium import Chromium


@pytest.fixture(scope="module")
def scenario(tmp_path_factory, zookeeper):
    demo = Rfc22Demo(tmp_path_factory.mktemp("rfc22"), say=lambda _: None)
    with demo.airflow(zookeeper) as airflow:
        report = demo.run(airflow, zookeeper)
        yield demo, airflow, report


def test_an_ingest_and_a_backfill_on_the_same_file_groups_both_succeed_one_after_a_retried_conflict(scenario):
    _, _, report = scenario
    runs = {r.run_id: r for r in report.runs}
    assert {r: runs[r].state for r in runs} == dict.fromkeys(
        ["ingest_1", "ingest_2", "backfill_corrections", "backfill_old_days"], "success")
    assert (runs["ingest_2"].dag_id, runs["backfill_corrections"].dag_id) == (INGEST_DAG, BACKFILL_DAG)

    overlapping = [runs["ingest_2"], runs["backfill_corrections"]]
    retried = [r for r in overlapping if r.tries > 1]
    assert len(retried) == 1, f"expected exactly one of the overlapping runs to be retried: {overlapping}"
    (loser,) = retried
    assert loser.tries == 2 and len(loser.conflicts) == 1
    assert loser.conflicts[0].startswith("write conflict (exit 3), retried with backoff")
    assert "committed instant" in loser.conflicts[0]  # names the writer that won
    # the backfill of days nobody else writes never conflicts
    assert runs["backfill_old_days"].tries == 1 and runs["ingest_1"].tries == 1

    # hudi-rs reads every expected trip once, with its latest value: nothing lost, nothing doubled
    # 600 seeded, 100 of a new day, 2 x 20 late trips, 2 x 150 of the old days
    assert report.rows == report.distinct_keys == report.expected_rows == 600 + 100 + 40 + 300
    assert (report.missing, report.wrong) == (0, 0)
    spans = report.overview.instants
    assert {s.status for s in spans} == {COMPLETED}  # the conflict left no pending instant behind
    # one commit per ingest run and per backfilled day: the retried run did not commit twice
    assert sorted(report.writers.values()) == ["backfill of 2026-11-10", "backfill of 2026-11-11",
                                               "backfill of 2026-11-20", "backfill of 2026-11-21", "ingest", "ingest"]
    assert sum(s.action == "commit" for s in spans) == 6


def test_the_timeline_view_needs_an_airflow_login(scenario):
    _, airflow, _ = scenario
    for path in (f"/hudi-ops/tables/{TABLE}", f"/hudi-ops/api/tables/{TABLE}", "/hudi-ops/"):
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(airflow.url + path, timeout=30)
        refused.value.close()
        assert refused.value.code == 401
    for path in ("/hudi-ops/docs", "/hudi-ops/openapi.json"):  # FastAPI's own pages, which skip the login
        with pytest.raises(urllib.error.HTTPError) as missing:
            urllib.request.urlopen(airflow.url + path, timeout=30)
        missing.value.close()
        assert missing.value.code == 404
    assert airflow.api("GET", "/hudi-ops/api/tables") == {TABLE: str(scenario[0].table_path)}
    # the tab on a table's DAGs opens that table's page
    signed_in = urllib.request.Request(f"{airflow.url}/hudi-ops/?dag_id={BACKFILL_DAG}",
                                       headers={"Authorization": f"Bearer {airflow.token()}"})
    with urllib.request.urlopen(signed_in, timeout=30) as page:
        html = page.read().decode()
    assert f"<h2>{TABLE}</h2>" in html and "<svg" in html
    assert f"/hudi/locks/{TABLE}: free" in html  # the lock every pipeline of the table shares, read live
    plugins = airflow.api("GET", "/api/v2/plugins")["plugins"]
    (plugin,) = [p for p in plugins if p["name"] == "hudi_ops_timeline"]
    assert {v["name"] for v in plugin["external_views"]} == {"Hudi tables", "Hudi timeline"}


def test_the_timeline_tab_shows_inside_airflows_ui(scenario, tmp_path):
    """The "Hudi timeline" tab of a table's DAG, in Airflow's own UI (the view in its iframe)."""
    from PIL import Image

    from hudi_ops.airflow.timeline_chart import ACTION_COLOURS

    demo, airflow, _ = scenario
    commits = sum(s.action == "commit" for s in TableOverview.load(demo.table_path).instants)
    session = {"name": "_token", "value": airflow.token(), "url": airflow.url, "httpOnly": True}
    bands, deadline = -1, time.monotonic() + 90
    with Chromium(tmp_path / "profile", width=1800) as browser:  # room for the chart at its own size
        while bands != commits + 1 and time.monotonic() < deadline:  # the React UI draws after its load event
            shot = browser.screenshot(f"{airflow.url}/dags/{INGEST_DAG}/plugin/hudi-timeline",
                                      tmp_path / "tab.png", cookies=[session], settle_s=2)
            bands = _bands(Image.open(shot).convert("RGB"), ACTION_COLOURS["commit"])
    assert bands == commits + 1  # a bar per commit, and the legend's swatch


def test_the_timeline_view_shows_the_table_in_a_browser(scenario, tmp_path):
    """Chromium opens the table's page with the UI's session cookie and takes a screenshot: the chart
    has a bar per commit in the commit colour, the rollback, the rolled-back write and the pending one.
    Without the cookie the same page shows no chart."""
    from PIL import Image

    from hudi_ops import HudiTable
    from hudi_ops.airflow.timeline_chart import ACTION_COLOURS, ROLLED_BACK_COLOUR

    demo, airflow, _ = scenario
    rolled_back = _dying_write(demo.table_path)
    time.sleep(0.5)
    HudiTable.open(demo.table_path).rollback_failed_writes(dry_run=False, options=_FAST_HEARTBEAT)
    pending = _dying_write(demo.table_path)
    overview = TableOverview.load(demo.table_path)
    status = {s.requested_time: s.status for s in overview.instants}
    assert (status[rolled_back], status[pending]) == (ROLLED_BACK, PENDING)

    page = f"{airflow.url}/hudi-ops/tables/{TABLE}"
    session = {"name": "_token", "value": airflow.token(), "url": airflow.url, "httpOnly": True}
    with Chromium(tmp_path / "profile") as browser:
        shot = Image.open(browser.screenshot(page, tmp_path / "timeline.png", cookies=[session])).convert("RGB")
        anonymous = Image.open(browser.screenshot(page, tmp_path / "anonymous.png")).convert("RGB")
    commits = sum(s.action == "commit" and s.status != ROLLED_BACK for s in overview.instants)
    # a band per bar (the pending commit's included), plus the legend's swatch
    assert _bands(shot, ACTION_COLOURS["commit"]) == commits + 1 == 8
    assert _bands(shot, ACTION_COLOURS["rollback"]) == 1 + 1
    assert _bands(shot, ROLLED_BACK_COLOUR) == 1 + 1
    assert _bands(anonymous, ACTION_COLOURS["commit"]) == 0
    # the page's API serves the same overview
    api = airflow.api("GET", f"/hudi-ops/api/tables/{TABLE}")
    assert [(i["requested_time"], i["status"]) for i in api["instants"]] == \
        [(s.requested_time, s.status) for s in overview.instants]
    assert (api["lock"]["holder"], api["lock"]["error"]) == (None, None)


_FAST_HEARTBEAT = {"hoodie.client.heartbeat.interval_in_ms": "100", "hoodie.client.heartbeat.tolerable.misses": "2"}

_DYING_WRITER = textwrap.dedent("""
    import sys, time, pyarrow as pa
    from hudi_ops import HudiTable
    client = HudiTable.open(sys.argv[1]).write_client(
        {"hoodie.client.heartbeat.interval_in_ms": "100", "hoodie.client.heartbeat.tolerable.misses": "2"})
    t = client.start_commit()
    client.upsert(pa.table({"trip_id": ["2026-11-20-0001"], "dt": ["2026-11-20"], "ts": [9_000], "fare": [1.0],
                            "city": ["sf"]}), t)
    print(t, flush=True)
    time.sleep(600)
""")


def _dying_write(table_path: Path) -> str:
    """A writer killed after writing its data files: its instant stays pending until rolled back."""
    with subprocess.Popen([sys.executable, "-c", _DYING_WRITER, str(table_path)], stdout=subprocess.PIPE,
                          text=True) as proc:
        instant = proc.stdout.readline().strip()
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
    assert instant, "the writer died before starting its commit"
    return instant


def _bands(image, colour: str, *, gap: int = 5) -> int:
    """Horizontal bands of rows holding at least 4 pixels of exactly `colour` (the SVG is crisp-edged).
    Rows closer than `gap` join one band (a bar struck through is one shape); chart rows are 8 px apart."""
    rgb = tuple(int(colour[i:i + 2], 16) for i in (1, 3, 5))
    width, height = image.size
    pixels = image.load()
    hits = [y for y in range(height) if sum(pixels[x, y] == rgb for x in range(width)) >= 4]
    return sum(1 for i, y in enumerate(hits) if i == 0 or y - hits[i - 1] > gap)
