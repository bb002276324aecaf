"""The platform under a real scheduler, as `make up` starts it: ZooKeeper, Airflow's api-server, scheduler
(LocalExecutor), dag-processor and triggerer on loopback, the repo's DAGs and plugin, real spark-submit
jobs.

The module starts `make up` once (its own process, with the demo's table, fed by its broker) and runs
the RFC-22 scenario of `make demo` on it, then checks what it left: the runs, the retried conflict, the
lineage, the services' compaction and clean, the table (through hudi-rs) and the timeline view, in
headless Chromium; last, Ctrl-C stops everything `make up` started. The platform's other DAGs (restore,
Airflow's backfills, a services group, a run on new messages) are `make test-long`'s:
test_local_airflow_dags.py.
"""

from __future__ import annotations

import json
import re
import signal
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

import pytest

from hudi_ops.airflow.dag_factory.factory import services_dag_id
from hudi_ops.format.meta_client import MetaClient
from hudi_ops.job_specs import IngestSpec
from hudi_ops.locks.lock_state import lock_state
from hudi_ops.options.occ import zookeeper_lock_options
from hudi_ops.read.table_overview import COMPLETED, PENDING, ROLLED_BACK, TableOverview
from hudi_ops.spark.kafka_connector import kafka_jars
from local_platform.demo.rfc22 import (
    BACKFILL_DAG,
    DATABASE,
    INGEST_DAG,
    LOCK_BASE_PATH,
    SERVICES_DAG,
    TABLE,
    TOPIC,
    produce,
)
from local_platform.local_airflow import ENV_FILE, PASSWORDS_FILE
from local_platform.ports import port_open
from tests.airflow.browser import filled
from tests.airflow.make_up import (
    FRESHNESS_MINUTES,
    GROUP_TABLES,
    RESTORE_DAG,
    STREAM,
    alive,
)
from tests.integration.processes import Job
from tests.tables import COLUMNS, read_hudi_rs

READ_BY_NAME = Path(__file__).parent / "read_by_name.py"
COLUMNS_ARG = ",".join(COLUMNS)

pytestmark = [pytest.mark.spark, pytest.mark.slow]  # spark-submit jobs of its own; minutes in all

@pytest.fixture(scope="module")
def scenario(platform):
    demo, up = platform
    return demo, up.airflow, demo.run(up.airflow, up.zookeeper, up.kafka)


def test_make_up_serves_the_tables_dags_on_loopback_with_every_component_healthy(platform):
    _, up = platform
    assert up.url == f"http://127.0.0.1:{up.port}"
    health = up.airflow.api("GET", "/api/v2/monitor/health", auth=False)
    components = ("metadatabase", "scheduler", "dag_processor", "triggerer")
    assert {c: health[c]["status"] for c in components} == dict.fromkeys(components, "healthy")
    up.airflow.wait_for_dags([INGEST_DAG, BACKFILL_DAG, SERVICES_DAG, RESTORE_DAG])
    # one service job of a table at a time, with nothing made by hand
    services = up.airflow.api("GET", f"/api/v2/dags/{services_dag_id(TABLE)}/details")
    assert (services["max_active_runs"], services["max_active_tasks"]) == (1, 1)
    assert len(up.started()) >= 5  # ZooKeeper and the Airflow components, at least
    # what another shell needs to run `airflow` on it, readable by its user only, as the admin's password
    for private in (ENV_FILE, PASSWORDS_FILE):
        assert (up.home / "airflow" / private).stat().st_mode & 0o077 == 0
    listed = up.airflow.cli("dags", "list")
    assert listed.returncode == 0 and INGEST_DAG in listed.stdout, listed.stderr[-2000:]
    # before its first write the table's page says how it will be, not an error
    signed_in = urllib.request.Request(f"{up.url}/hudi-ops/tables/{TABLE}",
                                       headers={"Authorization": f"Bearer {up.airflow.token()}"})
    with urllib.request.urlopen(signed_in, timeout=30) as page:
        html = page.read().decode()
    assert "No commits yet" in html and f"by its ingest ({INGEST_DAG}" in html and "class='error'" not in html


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
    assert loser.conflicts[0].startswith("write conflict (exit 3), retried with backoff: write conflict: instant ")
    failed, won = re.search(r"instant (\d{17}) overlaps instant (\d{17})", loser.conflicts[0]).groups()
    winner = "ingest" if loser.dag_id == BACKFILL_DAG else "backfill of 2026-11-2"
    assert report.writers[won].startswith(winner)  # Hudi's conflict names the commit that won
    # the backfill of days nobody else writes never conflicts
    assert runs["backfill_old_days"].tries == 1 and runs["ingest_1"].tries == 1

    # hudi-rs reads every expected trip once, with its latest value: nothing lost, nothing doubled
    # 600 seeded, 100 of a new day, 2 x 20 late trips, 2 x 150 of the old days
    assert report.rows == report.distinct_keys == report.expected_rows == 600 + 100 + 40 + 300
    assert (report.missing, report.wrong) == (0, 0)
    spans = report.overview.instants
    # the loser's failed instant is the only one not completed: pending until a later writer rolls it
    # back (LAZY) once its heartbeat expired, and nothing of it ever visible
    assert {s.requested_time for s in spans if s.status != COMPLETED} == {failed}
    assert {s.status for s in spans if s.requested_time == failed} <= {PENDING, ROLLED_BACK}
    # one commit per ingest run and per backfilled day: the retried run did not commit twice
    assert sorted(report.writers.values()) == ["backfill of 2026-11-10", "backfill of 2026-11-11",
                                               "backfill of 2026-11-20", "backfill of 2026-11-21", "ingest", "ingest"]
    assert sum(s.action == "deltacommit" and s.status == COMPLETED for s in spans) == 6  # MERGE_ON_READ


def test_openlineage_events_name_each_tasks_source_and_table_with_the_commits_statistics(platform, scenario):
    """Airflow's OpenLineage provider, with the file transport `make up` configures, in real DAG runs."""
    _, up = platform
    demo, _, report = scenario
    events = [json.loads(line) for line in (up.home / "lineage" / "events.jsonl").read_text().splitlines()]

    def of(task, kind="COMPLETE"):
        return [e for e in events if e["job"]["name"] == task and e["eventType"] == kind]

    table = {"namespace": "file", "name": str(demo.table_path)}
    ingests = of(f"{INGEST_DAG}.ingest")
    assert len(ingests) == 2 and all(e["job"]["namespace"] == "hudi-ops" for e in ingests)
    for event in ingests:
        ((source,), (output,)) = event["inputs"], event["outputs"]
        # the topic, by OpenLineage's naming for Kafka: the broker as namespace, the topic as name
        assert {k: source[k] for k in table} == {"namespace": f"kafka://{up.kafka}", "name": TOPIC}
        assert {k: output[k] for k in table} == table
        hudi, stats = event["run"]["facets"]["hudi"], output["outputFacets"]["outputStatistics"]
        assert (hudi["job"], hudi["outcome"]) == ("ingest", "committed")
        assert output["facets"]["version"]["datasetVersion"] == hudi["instant"]  # Hudi's commit, as the version
        assert report.writers[hudi["instant"]] == "ingest" and stats["rowCount"] > 0 and stats["fileCount"] > 0
        assert set(COLUMNS) <= {f["name"] for f in output["facets"]["schema"]["fields"]}
    # the compaction reads and writes the table; its commit is the table's new version
    (compaction,) = of(f"{SERVICES_DAG}.execute_compaction")
    assert [{k: d[k] for k in table} for d in (*compaction["inputs"], *compaction["outputs"])] == [table, table]
    (output,) = compaction["outputs"]
    assert output["facets"]["version"]["datasetVersion"] == report.services.compaction
    stats = output["outputFacets"]["outputStatistics"]
    assert stats["rowCount"] > 0 and stats["fileCount"] > 0 and stats["size"] > 0
    # the write that lost Hudi's conflict check: its failed try names the instant that committed first
    (loser,) = [r for r in report.runs if r.conflicts]
    failed = [e["run"]["facets"].get("hudi", {}) for e in events if e["eventType"] == "FAIL"]
    won = re.search(r"overlaps instant (\d{17})", loser.conflicts[0]).group(1)
    assert [(f.get("exitCode"), f.get("conflictingInstant")) for f in failed] == [(3, won)]


def test_airflows_statsd_metrics_count_the_conflict_its_retry_and_each_writers_commits(platform, scenario):
    """hudi-ops' metrics through Airflow's (StatsD, tags InfluxDB's way: docs/metrics.md), as a StatsD
    daemon on loopback receives them from the tasks of the scenario's runs."""
    _, up = platform
    _, _, report = scenario
    statsd = up.statsd
    (loser,) = [r for r in report.runs if r.conflicts]
    tags = {"table": TABLE, "pipeline": loser.dag_id, "job": "ingest" if loser.dag_id == INGEST_DAG else "backfill"}
    conflicts = statsd.wait_for("airflow.hudi_ops.job_conflicts", **tags)
    assert [(m.kind, m.value, m.tags["error"]) for m in conflicts] == [("c", 1.0, "WriteConflictError")]
    assert [(m.kind, m.value) for m in statsd.wait_for("airflow.hudi_ops.job_retries", **tags)] == [("c", 1.0)]
    failures = statsd.metrics("airflow.hudi_ops.job_failures")
    assert [(m.tags["pipeline"], m.tags["exit_code"]) for m in failures if m.tags["table"] == TABLE] == [
        (loser.dag_id, "3")]
    # each writer's commits once, its retry's among them: 2 ingest runs, 4 backfilled days
    commits = {job: sum(m.value for m in statsd.metrics("airflow.hudi_ops.job_commits")
                        if m.tags["table"] == TABLE and m.tags["job"] == job) for job in ("ingest", "backfill")}
    assert commits == {"ingest": 2, "backfill": 4}
    # every try that ran spark-submit is timed; the job's own work is a part of it
    durations = statsd.metrics("airflow.hudi_ops.job_duration")
    work = statsd.metrics("airflow.hudi_ops.job_work")
    writer_tries = [m for m in durations if m.tags["table"] == TABLE and m.tags["job"] in ("ingest", "backfill")]
    assert len(writer_tries) == sum(r.tries for r in report.runs) and all(m.kind == "ms" for m in writer_tries)
    assert work and all(m.value > 0 for m in work)
    assert max(m.value for m in work) < max(m.value for m in durations)
    # the services DAG's look at the table: its gauges
    gauges = {m.name.removeprefix("airflow.hudi_ops."): m for m in statsd.metrics("airflow.hudi_ops.table_")
              if m.tags == {"table": TABLE}}
    assert {"table_freshness_lag", "table_latest_ingest", "table_log_files_p50", "table_log_files_p99",
            "table_small_file_share", "table_pending_plans", "table_pending_plan_age"} <= set(gauges)
    assert all(m.kind == "g" for m in gauges.values()) and gauges["table_freshness_lag"].value >= 0


def test_an_ingest_run_past_the_freshness_goal_raises_its_deadline_alert_and_the_fleet_page_shows_the_table_late(
        platform, scenario):
    """The demo table's goal (a quarter minute here) is the ingest DAG's deadline alert: the run that waited
    behind the held lock missed it; Airflow's scheduler says so (its StatsD metric), its triggerer ran
    hudi-ops' callback, and the fleet page shows the table late, beside every table of make up."""
    _, up = platform
    triggerer_log = up.home / "airflow" / "triggerer.log"
    said = re.compile(rf"table {TABLE} is late: ingest run (\S+) of {INGEST_DAG} \(queued ")
    deadline = time.monotonic() + 60
    while "ingest_2" not in (late_runs := set(said.findall(triggerer_log.read_text(errors="replace")))):
        assert time.monotonic() < deadline, triggerer_log.read_text(errors="replace")[-3000:]
        time.sleep(0.5)
    # Airflow's own metric of each miss (its StatsD drops the run's tag: `statsd_disabled_tags`)
    missed = up.statsd.wait_for("airflow.deadline_alerts.deadline_missed", dag_id=INGEST_DAG)
    assert [m.kind for m in missed] == ["c"] * len(late_runs) and late_runs <= {"ingest_1", "ingest_2"}
    rows = {r["table"]: r for r in up.airflow.api("GET", "/hudi-ops/api/fleet")}
    assert set(rows) == {TABLE, STREAM, *GROUP_TABLES}
    trips = rows[TABLE]
    assert (trips["goal_min"], trips["late"], trips["note"]) == (FRESHNESS_MINUTES, True, None)
    assert trips["lag_s"] > FRESHNESS_MINUTES * 60 and trips["missed_deadlines"] == len(late_runs)
    assert trips["last_commit"] and trips["pending_plans"] == 0 and trips["log_files_p99"] is not None
    assert all(rows[name]["note"] == "no commits yet" for name in (STREAM, *GROUP_TABLES))
    signed_in = urllib.request.Request(f"{up.url}/hudi-ops/?sort=lag&order=desc",
                                       headers={"Authorization": f"Bearer {up.airflow.token()}"})
    with urllib.request.urlopen(signed_in, timeout=60) as page:
        html = page.read().decode()
    assert f"<a href='/hudi-ops/tables/{TABLE}'>{TABLE}</a>" in html and "<td class='late'>late</td>" in html
    assert html.index(f"data-table='{TABLE}'") < html.index(f"data-table='{STREAM}'")  # lag first, unknown last


def test_the_services_dag_compacts_the_logs_then_cleans_the_slices_the_compaction_superseded(scenario):
    demo, airflow, report = scenario
    services = report.services
    assert (services.state, services.tasks) == ("success", {
        **dict.fromkeys(["schedule_compaction", "execute_compaction", "clean"], "success"),
        "archive": "skipped"})  # a handful of commits: nothing to archive yet
    meta = MetaClient.open(demo.table_path)
    timeline = meta.timeline()
    assert timeline.completed_instant(services.compaction).action == "commit"
    # every log was compacted, and the clean removed every slice before the compaction: one base file per group
    groups = meta.fs_view(timeline).file_groups()
    assert groups and all(len(g.slices) == 1 and not g.slices[0].log_files for g in groups)
    assert services.clean.policy == "KEEP_LATEST_FILE_VERSIONS" and services.clean.files > 0
    assert report.table_ok  # hudi-rs read the table after the services
    assert read_hudi_rs(demo.table_path, read_optimized=True) == read_hudi_rs(demo.table_path)
    # the table's page shows the clean, no pending plan, and that the next clean has nothing to remove
    signed_in = urllib.request.Request(f"{airflow.url}/hudi-ops/tables/{TABLE}",
                                       headers={"Authorization": f"Bearer {airflow.token()}"})
    with urllib.request.urlopen(signed_in, timeout=30) as page:
        html = page.read().decode()
    assert f"<td class=\"text\">{services.clean.instant}</td>" in html
    assert "no compaction or clustering plan" in html
    assert "KEEP_LATEST_FILE_VERSIONS · earliest commit to retain - · removes 0 slice(s)" in html


def test_spark_sql_reads_the_demo_table_by_name_from_make_ups_hive_metastore(platform, scenario, tmp_path):
    """Every writer synced the table after its commits: an analyst's Spark application
    (a process of its own, Hive support, make up's metastore) reads `lake.trips_ro` and `_rt` as hudi-rs reads
    the table."""
    demo, _, report = scenario
    up = platform[1]
    assert up.metastore and up.metastore.startswith("thrift://127.0.0.1:")
    read = tmp_path / "read.jsonl"
    reader = Job.start([str(read), COLUMNS_ARG, f"{DATABASE}.{TABLE}_rt", f"{DATABASE}.{TABLE}_ro"],
                       tmp_path / "reader.log",
                       application=str(READ_BY_NAME), conf={"spark.sql.catalogImplementation": "hive",
                                                            "spark.hadoop.hive.metastore.uris": up.metastore})
    assert reader.process.wait(timeout=300) == 0, reader.log.read_text()[-3000:]
    lines = [json.loads(line) for line in read.read_text().splitlines()]
    expected = [list(r) for r in read_hudi_rs(demo.table_path)]
    assert [line["table"] for line in lines] == [f"{DATABASE}.{TABLE}_rt", f"{DATABASE}.{TABLE}_ro"]
    assert lines[0]["rows"] == lines[1]["rows"] == expected and len(expected) == report.expected_rows


class _NoRedirects(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None  # the redirect itself is the answer under test


def test_the_timeline_view_needs_an_airflow_login(scenario):
    _, airflow, _ = scenario
    opener = urllib.request.build_opener(_NoRedirects)
    for path in (f"/hudi-ops/tables/{TABLE}", "/hudi-ops/?sort=lag"):  # a page: to Airflow's sign-in, and back
        with pytest.raises(urllib.error.HTTPError) as sent:
            opener.open(airflow.url + path, timeout=30)
        sent.value.close()
        assert sent.value.code == 303
        location = urllib.parse.urlsplit(sent.value.headers["Location"])
        assert location.path == "/auth/login"
        assert urllib.parse.parse_qs(location.query)["next"] == [airflow.url + path]
    for path in (f"/hudi-ops/api/tables/{TABLE}", "/hudi-ops/api/fleet"):  # the API: 401
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(airflow.url + path, timeout=30)
        refused.value.close()
        assert refused.value.code == 401
    for path in ("/hudi-ops/docs", "/hudi-ops/openapi.json"):  # FastAPI's own pages, which skip the login
        with pytest.raises(urllib.error.HTTPError) as missing:
            urllib.request.urlopen(airflow.url + path, timeout=30)
        missing.value.close()
        assert missing.value.code == 404
    groups = scenario[0].root / "group"  # the services group's tables, beside the demo's
    assert airflow.api("GET", "/hudi-ops/api/tables") == {TABLE: str(scenario[0].table_path),
                                                          **{name: str(groups / name) for name in GROUP_TABLES},
                                                          STREAM: str(scenario[0].root / STREAM)}
    # the tab on a table's DAGs opens that table's page
    signed_in = urllib.request.Request(f"{airflow.url}/hudi-ops/?dag_id={BACKFILL_DAG}",
                                       headers={"Authorization": f"Bearer {airflow.token()}"})
    with urllib.request.urlopen(signed_in, timeout=30) as page:
        html = page.read().decode()
    assert f"<h2>{TABLE}</h2>" in html and "<svg" in html
    assert f"/hudi/locks/{TABLE}: free" in html  # the lock every pipeline of the table shares, read live
    plugins = airflow.api("GET", "/api/v2/plugins")["plugins"]
    (plugin,) = [p for p in plugins if p["name"] == "hudi_ops"]
    assert {v["name"] for v in plugin["external_views"]} == {"Hudi tables", "Hudi timeline"}


def test_the_timeline_tab_shows_inside_airflows_ui(scenario, browser, artifacts):
    """The "Hudi timeline" tab of a table's DAG, in Airflow's own UI (the view in its iframe)."""
    from hudi_ops.airflow.ui.timeline_chart import ACTION_COLOURS

    demo, airflow, _ = scenario
    spans = TableOverview.load(demo.table_path).instants
    commits = sum(s.action == "deltacommit" and s.status != ROLLED_BACK for s in spans)
    browser.sign_in(airflow.url, airflow.token())
    browser.goto(f"{airflow.url}/dags/{INGEST_DAG}/plugin/hudi-timeline")
    # the frame, a page of its own, draws after the UI's: a bar per deltacommit, and the legend's swatch
    drawn = browser.wait_drawn(filled(ACTION_COLOURS["deltacommit"]), in_frame=True, what="the timeline in the tab")
    browser.screenshot(artifacts / "tab.png")
    assert drawn == commits + 1


def test_the_timeline_view_shows_the_table_in_a_browser(scenario, platform, browser, tmp_path, artifacts):
    """Chromium opens the table's page with the UI's session cookie: the chart draws a bar per commit in
    the commit colour, the rollback, the rolled-back write and the pending one. Without the cookie the same
    page shows no chart."""
    from hudi_ops.airflow.ui.timeline_chart import ACTION_COLOURS, ROLLED_BACK_COLOUR

    demo, airflow, report = scenario
    (failed,) = [s.requested_time for s in report.overview.instants if s.status != COMPLETED]
    # one more ingest, once the conflict's loser has no heartbeat: it rolls the failed write back
    produce(platform[1].kafka, [{**r, "ts": 4_000} for r in demo.sources.update[:5]])
    airflow.trigger(INGEST_DAG, "ingest_3")
    assert airflow.wait_for_runs([(INGEST_DAG, "ingest_3")]) == {(INGEST_DAG, "ingest_3"): "success"}
    # first try: the write after the compaction and clean is where Hudi 1.2.0's metadata table failed
    assert int(airflow.task_instance(INGEST_DAG, "ingest_3", "ingest")["try_number"]) == 1
    pending = _dying_write(demo, tmp_path, platform[1])
    overview = TableOverview.load(demo.table_path)
    status = {s.requested_time: s.status for s in overview.instants}
    assert (status[failed], status[pending]) == (ROLLED_BACK, PENDING)
    # the fleet counts the conflict's rolled-back write, and the killed one once its heartbeat expired (the
    # demo's writers beat every 5 s: 10 s)
    deadline = time.monotonic() + 60
    while (failed_writes := _fleet_row(airflow, TABLE)["failed_writes"]) < 2 and time.monotonic() < deadline:
        time.sleep(1)
    assert failed_writes == 2

    page = f"{airflow.url}/hudi-ops/tables/{TABLE}"
    browser.sign_in(airflow.url, airflow.token())
    browser.goto(page)
    browser.wait_for("document.querySelector('svg.hudi-timeline')", what="the timeline chart")
    browser.screenshot(artifacts / "timeline.png")
    drawn = {c: browser.drawn(filled(c)) for c in (*ACTION_COLOURS.values(), ROLLED_BACK_COLOUR)}
    browser.goto(f"{airflow.url}/hudi-ops/")  # the fleet page: a row per table of make up, each to its page
    browser.wait_for("document.querySelector('table.fleet')", what="the fleet page")
    browser.screenshot(artifacts / "fleet.png")
    listed = browser.evaluate("[...document.querySelectorAll('table.fleet tr[data-table]')].map(r => r.dataset.table)")
    assert sorted(listed) == sorted([TABLE, STREAM, *GROUP_TABLES])
    browser.forget(airflow.url)
    browser.goto(page)  # without a session: Airflow's sign-in, which would come back here
    browser.screenshot(artifacts / "anonymous.png")
    assert urllib.parse.urlsplit(browser.driver.current_url).path == "/auth/login"
    anonymous = browser.drawn("svg.hudi-timeline rect")
    commits = sum(s.action == "deltacommit" and s.status != ROLLED_BACK for s in overview.instants)
    rollbacks = sum(s.action == "rollback" for s in overview.instants)
    # a bar per instant (the pending write's included), plus the legend's swatch
    assert drawn[ACTION_COLOURS["deltacommit"]] == commits + 1
    # the scenario's six and ingest_3; pending: the killed write
    assert sum(s.action == "deltacommit" and s.status == COMPLETED for s in overview.instants) == 7
    assert drawn[ACTION_COLOURS["commit"]] == 1 + 1  # the compaction
    assert drawn[ACTION_COLOURS["clean"]] == 1 + 1
    assert drawn[ACTION_COLOURS["rollback"]] == rollbacks + 1 and rollbacks >= 1
    assert drawn[ROLLED_BACK_COLOUR] == 1 + 1
    assert anonymous == 0  # no chart without Airflow's session
    # the page's API serves the same overview
    api = airflow.api("GET", f"/hudi-ops/api/tables/{TABLE}")
    assert [(i["requested_time"], i["status"]) for i in api["instants"]] == \
        [(s.requested_time, s.status) for s in overview.instants]
    assert (api["lock"]["holder"], api["lock"]["error"]) == (None, None)


def _fleet_row(airflow, table: str) -> dict:
    (row,) = [r for r in airflow.api("GET", "/hudi-ops/api/fleet") if r["table"] == table]
    return row


def _dying_write(demo, tmp_path, up) -> str:
    """An ingest killed (SIGKILL) as soon as Hudi started its instant: it stays pending."""
    produce(up.kafka, [{**r, "ts": 5_000} for r in demo.sources.update[:5]])
    zookeeper = up.zookeeper
    before = {s.requested_time for s in TableOverview.load(demo.table_path).instants}
    host, port = zookeeper.url.rsplit(":", 1)
    # killed while it may hold the table's lock: its ZooKeeper session, hence its lock node, ends soon
    lock = zookeeper_lock_options(host, int(port), {"base_path": LOCK_BASE_PATH, "session_timeout_ms": 3000}, TABLE)
    ingest = IngestSpec(base_path=str(demo.table_path), source_kind="kafka", kafka_topic=TOPIC,
                        hoodie_conf={**lock, "kafka.bootstrap.servers": up.kafka})
    job = Job.start(ingest.to_argv(), tmp_path / "dying.log", jars=kafka_jars())
    deadline = time.monotonic() + 120
    try:
        while not (new := {s.requested_time for s in TableOverview.load(demo.table_path).instants} - before):
            assert job.process.poll() is None and time.monotonic() < deadline, job.log.read_text()[-2000:]
            time.sleep(0.05)
    finally:
        job.kill()
    while lock_state(lock, TABLE).holder is not None:
        assert time.monotonic() < deadline, "the killed writer's lock node outlived its session"
        time.sleep(0.5)
    (instant,) = new
    return instant


def test_ctrl_c_stops_make_up_and_everything_it_started(platform):
    """Last in the module: SIGINT, as Ctrl-C sends it, ends `make up` and every process it started."""
    _, up = platform
    started = up.started()
    up.process.send_signal(signal.SIGINT)
    assert up.process.wait(timeout=90) == 0, "\n".join(up.seen)
    up.until(r"^stopped$", 5)
    assert not port_open(up.port) and not port_open(up.zookeeper.port)
    deadline = time.monotonic() + 10
    while left := alive(started | up.started()):
        assert time.monotonic() < deadline, f"processes left running after Ctrl-C: {left}"
        time.sleep(0.5)
