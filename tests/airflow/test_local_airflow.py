"""The platform under a real scheduler, as `make up` starts it: ZooKeeper, Airflow's api-server, scheduler
(LocalExecutor), dag-processor and triggerer on loopback, the repo's DAGs and plugin, real spark-submit
jobs.

The module starts `make up` once (its own process, with the demo's table, fed by its broker) and runs
the RFC-22 scenario of `make demo` on it, then checks what it left: the runs, the retried conflict, the
table (through hudi-rs) and the timeline view, in headless Chromium; then, on the same stack, Airflow's
own backfills (`airflow backfill create`) of the backfill DAG, and their refusal by the other DAGs;
last, Ctrl-C stops everything `make up` started.
"""

from __future__ import annotations

import datetime as dt
import json
import re
import signal
import time
import urllib.error
import urllib.request

import pytest
import yaml

from hudi_ops.airflow.airflow_api import AirflowApiError
from hudi_ops.airflow.dag_factory import restore_dag_id, services_dag_id
from hudi_ops.airflow.services_group import group_dag_id, state_key
from hudi_ops.demo.rfc22 import (
    BACKFILL_DAG,
    INGEST_DAG,
    LOCK_BASE_PATH,
    OLD_DAYS,
    SCHEMA,
    SERVICES_DAG,
    TABLE,
    TOPIC,
    Rfc22Demo,
    produce,
)
from hudi_ops.format.meta_client import MetaClient
from hudi_ops.job_specs import IngestSpec, SavepointSpec
from hudi_ops.local.local_airflow import ENV_FILE, PASSWORDS_FILE
from hudi_ops.locks.job_options import INLINE_SERVICE_OFF
from hudi_ops.locks.lock_state import lock_state
from hudi_ops.locks.occ_options import zookeeper_lock_options
from hudi_ops.read.table_need import measure
from hudi_ops.read.table_overview import COMPLETED, PENDING, ROLLED_BACK, TableOverview
from hudi_ops.spark.__main__ import main
from hudi_ops.spark.kafka_connector import kafka_jars
from tests.airflow.browser import Browser
from tests.airflow.make_up import MakeUp, alive, listening
from tests.integration.processes import Job, run_job
from tests.tables import COLUMNS, Model, read_hudi_rs, trips, write_source

pytestmark = [pytest.mark.spark, pytest.mark.slow]  # spark-submit jobs of its own; minutes in all

RESTORE_DAG = restore_dag_id(TABLE)


@pytest.fixture(scope="module")
def browser():
    """One chromium for the module's browser tests."""
    opened = Browser()
    yield opened
    opened.close()


#: a services group of four MERGE_ON_READ tables beside the demo's: each table's upserts after its first
#: commit, hence the log files of its one file slice
GROUP, GROUP_TABLES = "fleet", {"hot": 3, "warm": 2, "mild": 1, "cold": 0}
GROUP_DAG = group_dag_id(GROUP)
GROUP_COMPACTION = {"hoodie.compact.inline.max.delta.commits": "2"}  # 2 deltacommits: cold has 1 (its first)
#: a table fed by a topic of make up's broker, its ingest run by new messages alone (no schedule)
STREAM, STREAM_TOPIC = "stream", "stream-trips"


@pytest.fixture(scope="module")
def platform(tmp_path_factory):
    """`make up` with the demo's table and a services group's: the module's Airflow and ZooKeeper (its last
    test stops it)."""
    root = tmp_path_factory.mktemp("rfc22")
    demo = Rfc22Demo(root, say=lambda _: None)
    config = demo.write_tables_config()
    raw = yaml.safe_load(config.read_text())
    # the group's ticks are the test's own runs: its cron fires once a year
    raw["services_groups"] = {GROUP: {"budget": 2, "policy": "need", "schedule": "0 0 1 1 *"}}
    for name in GROUP_TABLES:
        raw["tables"][name] = {"base_path": str(root / "group" / name), "record_key": "trip_id",
                               "partition_field": "dt", "ordering_field": "ts", "table_type": "MERGE_ON_READ",
                               "services": {"group": GROUP, "compaction": GROUP_COMPACTION}}
    raw["tables"][STREAM] = {"base_path": str(root / STREAM), "record_key": "trip_id", "partition_field": "dt",
                             "ordering_field": "ts", "table_type": "MERGE_ON_READ",
                             "ingest": {"source_kind": "kafka", "kafka_topic": STREAM_TOPIC, "on_new_messages": True}}
    config.write_text(yaml.safe_dump(raw, sort_keys=False))
    up = MakeUp(root / "up", config)
    yield demo, up
    up.close()


@pytest.fixture(scope="module")
def group_tables(platform, spark, tmp_path_factory):
    """The group's tables, written in this process (their compaction left to the group, as the table's DAGs
    would leave it); per table the model of what it holds."""
    demo, _ = platform
    models = {}
    for name, upserts in GROUP_TABLES.items():
        landing, model = tmp_path_factory.mktemp(f"{name}-landing"), Model()
        for commit in range(1 + upserts):
            rows = trips("2026-11-01", range(20), ts=commit + 1, fare=float(commit))
            write_source(landing / f"{commit}.parquet", rows)
            model.upsert(rows)
            spec = IngestSpec(base_path=str(demo.root / "group" / name), table_name=name, source_path=str(landing),
                              record_key_field="trip_id", partition_path_field="dt", ordering_field="ts",
                              table_type="MERGE_ON_READ", hoodie_conf=INLINE_SERVICE_OFF["compaction"])
            assert main(spec.to_argv(), spark=spark) == 0
        models[demo.root / "group" / name] = model
    return models


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
    from hudi_ops.airflow.timeline_chart import ACTION_COLOURS

    demo, airflow, _ = scenario
    spans = TableOverview.load(demo.table_path).instants
    commits = sum(s.action == "deltacommit" and s.status != ROLLED_BACK for s in spans)
    browser.sign_in(airflow.url, airflow.token())
    browser.goto(f"{airflow.url}/dags/{INGEST_DAG}/plugin/hudi-timeline")
    # the frame, a page of its own, draws after the UI's: a bar per deltacommit, and the legend's swatch
    drawn = browser.wait_drawn(_fill(ACTION_COLOURS["deltacommit"]), in_frame=True, what="the timeline in the tab")
    browser.screenshot(artifacts / "tab.png")
    assert drawn == commits + 1


def test_the_timeline_view_shows_the_table_in_a_browser(scenario, platform, browser, tmp_path, artifacts):
    """Chromium opens the table's page with the UI's session cookie: the chart draws a bar per commit in
    the commit colour, the rollback, the rolled-back write and the pending one. Without the cookie the same
    page shows no chart."""
    from hudi_ops.airflow.timeline_chart import ACTION_COLOURS, ROLLED_BACK_COLOUR

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

    page = f"{airflow.url}/hudi-ops/tables/{TABLE}"
    browser.sign_in(airflow.url, airflow.token())
    browser.goto(page)
    browser.wait_for("document.querySelector('svg.hudi-timeline')", what="the timeline chart")
    browser.screenshot(artifacts / "timeline.png")
    drawn = {c: browser.drawn(_fill(c)) for c in (*ACTION_COLOURS.values(), ROLLED_BACK_COLOUR)}
    browser.forget(airflow.url)
    browser.goto(page)
    browser.screenshot(artifacts / "anonymous.png")
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


def _fill(colour: str) -> str:
    """The timeline chart's shapes filled with `colour`: its bars and its legend's swatch."""
    return f'svg.hudi-timeline rect[fill="{colour}"]'


def test_the_restore_dag_waits_for_a_writer_at_work_restores_and_gives_the_writers_back(scenario, platform, tmp_path):
    """A savepoint, then an ingest that is running when the restore DAG is triggered: the restore pauses
    the writer DAGs, waits for the ingest's task to end, undoes its commit, and unpauses what it paused."""
    demo, airflow, _ = scenario
    table = str(demo.table_path)
    code, made = run_job(SavepointSpec(base_path=table).to_argv(), tmp_path / "savepoint.log")
    assert code == 0, made
    at_savepoint = read_hudi_rs(demo.table_path)
    produce(platform[1].kafka, [{**r, "ts": 6_000} for r in demo.sources.update[:7]])
    airflow.trigger(INGEST_DAG, "ingest_4")
    deadline = time.monotonic() + 120
    while airflow.task_instance(INGEST_DAG, "ingest_4", "ingest")["state"] != "running":
        assert time.monotonic() < deadline, "ingest_4 never started"
        time.sleep(0.5)
    airflow.trigger(RESTORE_DAG, "restore_1", {"savepoint": made["instant"]})
    states = airflow.wait_for_runs([(INGEST_DAG, "ingest_4"), (RESTORE_DAG, "restore_1")])
    assert set(states.values()) == {"success"}, states
    ingest = airflow.task_instance(INGEST_DAG, "ingest_4", "ingest")
    restore = airflow.task_instance(RESTORE_DAG, "restore_1", "restore")
    assert ingest["try_number"] == 1 and restore["start_date"] > ingest["end_date"]  # it waited
    assert read_hudi_rs(demo.table_path) == at_savepoint  # ingest_4's commit undone
    assert not [i for i in MetaClient.open(demo.table_path).timeline().pending if i.action == "restore"]
    # it paused the writers at work and gave back those alone: the services stay paused, by the demo
    pushed = airflow.api("GET", f"/api/v2/dags/{RESTORE_DAG}/dagRuns/restore_1/taskInstances/pause_writers/"
                                "xcomEntries/return_value")
    assert sorted(pushed["value"]) == sorted([INGEST_DAG, BACKFILL_DAG])
    paused = {d: airflow.client.is_paused(d) for d in (INGEST_DAG, BACKFILL_DAG, SERVICES_DAG)}
    assert paused == {INGEST_DAG: False, BACKFILL_DAG: False, SERVICES_DAG: True}


def _keys(day: str) -> str:
    """What a user types into a date field (en-US order: month, day, year) for `day` (YYYY-MM-DD)."""
    year, month, date = day.split("-")
    return month + date + year


def test_a_newcomer_signs_in_triggers_a_backfill_from_its_form_and_sees_its_commits_by_pipeline(
        scenario, browser, artifacts):
    """Airflow's UI in headless Chromium, as a user clicks through it (screenshots in `artifacts`):
    the login form, the DAG list, the backfill's trigger form and its Params (the window optional: an
    Airflow backfill's runs need none), a window that ends before it starts, a window that runs, and the
    table's timeline with the commits it made."""
    from hudi_ops.airflow.timeline_chart import ACTION_COLOURS

    demo, airflow, _ = scenario
    assert not airflow.client.is_paused(BACKFILL_DAG)  # the restore test before this one paused it, then gave it back
    before = {s.requested_time for s in TableOverview.load(demo.table_path).instants}
    params = {"start": "first dt=YYYY-MM-DD partition of a manual run",
              "end": "last dt=YYYY-MM-DD partition of a manual run", "parallelism": "shuffle parallelism of the writes"}
    trigger, submit = "button[aria-label='Trigger Dag']", "[data-testid=trigger-dag-submit]"

    def triggered(start: str, end: str) -> str:
        """The run the backfill's trigger form starts for the window; its id."""
        browser.goto(f"{airflow.url}/dags/{BACKFILL_DAG}")
        browser.wait_for(f'document.querySelector("{trigger}")', what="the DAG's Trigger button")
        browser.click(trigger)
        browser.wait_for("document.querySelector('#element_start')", what="the trigger form")
        browser.type_into("#element_start", _keys(start))
        browser.type_into("#element_end", _keys(end))
        assert browser.evaluate("[document.querySelector('#element_start').value, "
                                "document.querySelector('#element_end').value]") == [start, end]
        browser.wait_for(f"!document.querySelector('{submit}').disabled", what="the form to accept the window")
        browser.click(submit)
        browser.wait_for("location.pathname.includes('/runs/')", what="the new run's page")
        return browser.evaluate("decodeURIComponent(location.pathname.split('/runs/')[1])")

    browser.forget(airflow.url)  # a newcomer: not signed in
    browser.goto(f"{airflow.url}/")
    browser.wait_for("document.querySelector('input[name=username]')", what="the login form")
    browser.screenshot(artifacts / "1-sign-in.png")
    browser.type_into("input[name=username]", airflow.USER)
    browser.type_into("input[name=password]", airflow.password)
    browser.click("button[type=submit]")
    browser.wait_for("!location.pathname.startsWith('/auth/')", what="the home page, signed in")

    browser.goto(f"{airflow.url}/dags")
    dags = [INGEST_DAG, BACKFILL_DAG, SERVICES_DAG, RESTORE_DAG]
    browser.wait_for(f"{dags} .every(d => document.body.innerText.includes(d))", what=f"the DAGs {dags}")
    browser.screenshot(artifacts / "2-dags.png")

    browser.goto(f"{airflow.url}/dags/{BACKFILL_DAG}")
    browser.wait_for(f'document.querySelector("{trigger}")', what="the DAG's Trigger button")
    browser.click(trigger)
    browser.wait_for("document.querySelector('#element_start')", what="the trigger form")
    form = browser.text()
    for name, description in params.items():  # each Param with its description; the window optional (an
        mark = "*\n" if name == "parallelism" else ""  # Airflow backfill's runs have their days)
        assert f"{name}\n{mark}{description}" in form, form
    assert "This field is required" not in form
    browser.screenshot(artifacts / "3-trigger-form.png")

    # An end before the start: Airflow validates each Param alone, so the form takes it; the run's
    # task refuses it before Spark starts, names the fix, and is not retried
    wrong = triggered("2026-11-11", "2026-11-10")
    assert airflow.wait_for_runs([(BACKFILL_DAG, wrong)]) == {(BACKFILL_DAG, wrong): "failed"}
    assert int(airflow.task_instance(BACKFILL_DAG, wrong, "backfill")["try_number"]) == 1
    browser.goto(f"{airflow.url}/dags/{BACKFILL_DAG}/runs/{wrong}/tasks/backfill")
    browser.wait_for("document.body.innerText.includes('swap the start and the end')", what="the task's log")
    assert "the backfill window ends (2026-11-10) before it starts (2026-11-11)" in browser.text()
    browser.screenshot(artifacts / "4-end-before-start.png")
    assert {s.requested_time for s in TableOverview.load(demo.table_path).instants} == before

    run = triggered(OLD_DAYS[0], OLD_DAYS[1])
    assert airflow.wait_for_runs([(BACKFILL_DAG, run)]) == {(BACKFILL_DAG, run): "success"}
    browser.goto(f"{airflow.url}/dags/{BACKFILL_DAG}/runs/{run}")
    browser.wait_for("document.body.innerText.includes('Success')", what="the run shown as a success")
    browser.screenshot(artifacts / "5-backfill-run.png")

    new = [s for s in TableOverview.load(demo.table_path).instants if s.requested_time not in before]
    assert [(s.action, s.status, s.pipeline) for s in new] == [
        ("deltacommit", COMPLETED, f"backfill of {day}") for day in OLD_DAYS]
    browser.goto(f"{airflow.url}/hudi-ops/tables/{TABLE}")
    browser.wait_for("document.querySelector('svg.hudi-timeline')", what="the timeline chart")
    shown = browser.text()
    for s in new:  # its bar's label, and its row among the latest commits
        assert f"{s.requested_time} deltacommit · {s.pipeline}" in shown, shown
        assert re.search(rf"{s.requested_time}\t\d{{17}}\tdeltacommit\tUPSERT\t{s.pipeline}\t", shown), shown
    browser.screenshot(artifacts / "6-timeline.png")
    browser.goto(f"{airflow.url}/dags/{BACKFILL_DAG}/plugin/hudi-timeline")  # the same, as a tab of the DAG
    drawn = browser.wait_drawn(_fill(ACTION_COLOURS["deltacommit"]), in_frame=True, what="the timeline in the tab")
    browser.screenshot(artifacts / "7-timeline-tab.png")
    commits = sum(s.action == "deltacommit" and s.status != ROLLED_BACK
                  for s in TableOverview.load(demo.table_path).instants)
    assert drawn == commits + 1  # and the legend's swatch


BACKFILL_DAYS = ("2026-10-01", "2026-10-02")


def test_an_airflow_backfill_commits_each_day_once_and_a_rerun_writes_the_corrections_each_key_once(scenario):
    """`airflow backfill create` on the backfill DAG, through the scheduler: a run per day, each writing
    its day's folder in one commit; again with `--reprocess-behavior completed` (the same runs, cleared)
    after a day's source was corrected: each day written again, the correction in, each key once. A
    manual run with no window fails at once."""
    demo, airflow, _ = scenario
    model = Model().upsert(dict(zip(COLUMNS, row, strict=True)) for row in read_hudi_rs(demo.table_path))
    written = {}
    for n, day in enumerate(BACKFILL_DAYS):
        rows = [{**r, "city": "sf"} for r in trips(day, range(40 + n), ts=700)]
        write_source(demo.history / f"dt={day}" / "part-0000.parquet", rows, SCHEMA)
        model.upsert(rows)
        written[day] = rows
    window = ["--dag-id", BACKFILL_DAG, "--from-date", BACKFILL_DAYS[0], "--to-date", BACKFILL_DAYS[-1]]

    made = airflow.cli("backfill", "create", *window)
    assert made.returncode == 0, made.stdout[-2000:] + made.stderr[-2000:]
    first = _finished_backfill(airflow)
    runs = airflow.api("GET", f"/api/v2/dags/{BACKFILL_DAG}/dagRuns?run_type=backfill")["dag_runs"]
    # a run per day, its data interval that day (its id names the interval's end, when it could run)
    assert sorted((r["data_interval_start"], r["data_interval_end"], r["state"]) for r in runs) == [
        (f"{day}T00:00:00Z", f"2026-10-0{n + 2}T00:00:00Z", "success") for n, day in enumerate(BACKFILL_DAYS)]
    assert read_hudi_rs(demo.table_path) == model.expected()
    assert _backfill_commits(demo) == dict.fromkeys(BACKFILL_DAYS, 1)

    day = BACKFILL_DAYS[1]  # corrections that came later
    corrected = [{**r, "ts": 701, "fare": 99.0} if i < 5 else r for i, r in enumerate(written[day])]
    write_source(demo.history / f"dt={day}" / "part-0000.parquet", corrected, SCHEMA)
    model.upsert(corrected)
    again = airflow.cli("backfill", "create", *window, "--reprocess-behavior", "completed")
    assert again.returncode == 0, again.stdout[-2000:] + again.stderr[-2000:]
    second = _finished_backfill(airflow, after=first)
    reruns = {r["dag_run_id"]: r for r in airflow.api(
        "GET", f"/api/v2/dags/{BACKFILL_DAG}/dagRuns?run_type=backfill")["dag_runs"]}
    assert set(reruns) == {r["dag_run_id"] for r in runs}  # the same runs, run again
    assert {r["state"] for r in reruns.values()} == {"success"}
    assert all(airflow.task_instance(BACKFILL_DAG, r, "backfill")["start_date"] > second["created_at"]
               for r in reruns)
    assert read_hudi_rs(demo.table_path) == model.expected()  # the correction in, each key once
    assert _backfill_commits(demo) == dict.fromkeys(BACKFILL_DAYS, 2)  # a cleared run writes its day again

    airflow.trigger(BACKFILL_DAG, "no_window")  # a manual run must say which days
    assert airflow.wait_for_runs([(BACKFILL_DAG, "no_window")]) == {(BACKFILL_DAG, "no_window"): "failed"}
    assert int(airflow.task_instance(BACKFILL_DAG, "no_window", "backfill")["try_number"]) == 1
    log = airflow.task_log(BACKFILL_DAG, "no_window", "backfill", 1)
    assert f"bad job arguments, not retried: a manual run of {BACKFILL_DAG} needs a window" in log


def test_the_other_dags_refuse_airflow_backfills(scenario):
    _, airflow, _ = scenario
    refused = airflow.cli("backfill", "create", "--dag-id", INGEST_DAG, "--from-date", "2026-01-01",
                          "--to-date", "2026-01-31")
    assert refused.returncode != 0
    assert f"Dag with dag_id: '{INGEST_DAG}' does not allow backfill runs" in refused.stdout + refused.stderr
    for dag_id in (INGEST_DAG, SERVICES_DAG, RESTORE_DAG):
        with pytest.raises(AirflowApiError) as rest:
            airflow.api("POST", "/api/v2/backfills", {"dag_id": dag_id, "from_date": "2026-01-01T00:00:00Z",
                                                      "to_date": "2026-01-31T00:00:00Z"})
        assert f"Dag with dag_id: '{dag_id}' does not allow backfill runs" in str(rest.value)
        # where Airflow shows the DAG, its description says where backfills go
        assert airflow.api("GET", f"/api/v2/dags/{dag_id}")["description"].endswith(
            f"Airflow backfills of the table: {BACKFILL_DAG}.")
    assert airflow.api("GET", f"/api/v2/dags/{BACKFILL_DAG}")["is_backfillable"] is True


def _finished_backfill(airflow, *, after: dict | None = None, timeout_s: float = 900) -> dict:
    """The backfill of the backfill DAG newer than `after`, once Airflow marked it completed."""
    deadline = time.monotonic() + timeout_s
    while True:
        listed = airflow.api("GET", f"/api/v2/backfills?dag_id={BACKFILL_DAG}")["backfills"]
        newest = max(listed, key=lambda b: b["id"])
        if (after is None or newest["id"] > after["id"]) and newest["completed_at"]:
            return newest
        assert time.monotonic() < deadline, f"backfill not completed in {timeout_s:g}s: {newest}"
        time.sleep(2)


def _backfill_commits(demo) -> dict[str, int]:
    """Completed commits per backfilled day of BACKFILL_DAYS, read from the timeline."""
    spans = TableOverview.load(demo.table_path).instants
    return {day: sum(s.status == COMPLETED and s.pipeline == f"backfill of {day}" for s in spans)
            for day in BACKFILL_DAYS}


def test_a_services_group_runs_the_most_needed_tables_first_never_more_than_its_budget_at_once(
        platform, group_tables):
    _, up = platform
    airflow, tables = up.airflow, {path.name: path for path in group_tables}
    airflow.wait_for_dags([GROUP_DAG])
    details = airflow.api("GET", f"/api/v2/dags/{GROUP_DAG}/details")
    assert (details["max_active_runs"], details["max_active_tasks"]) == (1, 2)
    with pytest.raises(AirflowApiError):  # a grouped table's services run in the group alone
        airflow.api("GET", f"/api/v2/dags/{services_dag_id('hot')}")
    needs = {name: measure(MetaClient.open(path), {"compaction": GROUP_COMPACTION}) for name, path in tables.items()}
    assert {name: need.max_log_files for name, need in needs.items()} == GROUP_TABLES
    assert [name for name, need in needs.items() if need.due()] == ["hot", "warm", "mild"]

    ran = {}
    for tick in ("tick_1", "tick_2", "tick_3"):
        airflow.trigger(GROUP_DAG, tick)
        assert airflow.wait_for_runs([(GROUP_DAG, tick)]) == {(GROUP_DAG, tick): "success"}
        listed = airflow.api("GET", f"/api/v2/dags/{GROUP_DAG}/dagRuns/{tick}/taskInstances/service/listMapped")
        ran[tick] = [ti for ti in listed["task_instances"] if ti["map_index"] >= 0]
    # the budget's two most needed at the first tick, the third at the next; cold is never due
    assert {tick: sorted(ti["rendered_map_index"] for ti in tis) for tick, tis in ran.items()} == {
        "tick_1": ["compaction of hot", "compaction of warm"], "tick_2": ["compaction of mild"], "tick_3": []}
    jobs = [ti for tis in ran.values() for ti in tis]
    assert {ti["state"] for ti in jobs} == {"success"}
    spans = [(dt.datetime.fromisoformat(ti["start_date"]), dt.datetime.fromisoformat(ti["end_date"])) for ti in jobs]
    assert max(sum(start <= at < end for start, end in spans) for at, _ in spans) <= 2
    # every due table serviced within a tick of waiting, and nothing waits now
    state = json.loads(airflow.api("GET", f"/api/v2/variables/{state_key(GROUP)}")["value"])
    assert (state["tick"], state["waited"], state["last_serviced"]) == (3, {}, {"hot": 1, "warm": 1, "mild": 2})
    for path, model in group_tables.items():
        timeline = MetaClient.open(path).timeline()
        assert len([i for i in timeline.completed if i.action == "commit"]) == (path.name != "cold")
        assert read_hudi_rs(path) == model.expected()  # hudi-rs reads every key once, latest value


def test_new_messages_run_a_kafka_fed_tables_ingest_through_airflows_triggerer(platform):
    """make up's broker has the topic its table reads; each burst of messages produced wakes the ingest DAG
    through its AssetWatcher (the Kafka provider's message-queue trigger, in the triggerer), and a run
    commits them: hudi-rs reads the model after each burst, and no run came from a schedule."""
    from confluent_kafka import Producer

    demo, up = platform
    airflow, dag_id, table, model = up.airflow, f"hudi_ingest__{STREAM}", demo.root / STREAM, Model()
    airflow.wait_for_dags([dag_id])
    producer = Producer({"bootstrap.servers": up.kafka})
    finished: list[dict] = []
    for burst in range(2):
        rows = trips("2026-11-25", range(burst * 5, burst * 5 + 10), ts=burst + 1)  # the second: 5 new, 5 updated
        for row in rows:
            producer.produce(STREAM_TOPIC, key=row["trip_id"].encode(), value=json.dumps(row).encode())
        assert producer.flush(30) == 0
        model.upsert(rows)
        deadline = time.monotonic() + 300
        while True:  # until a run the burst woke has finished with the burst in the table
            runs = airflow.api("GET", f"/api/v2/dags/{dag_id}/dagRuns")["dag_runs"]
            done = [r for r in runs if r["state"] in ("success", "failed")]
            if len(done) > len(finished) and (table / ".hoodie").is_dir() and read_hudi_rs(table) == model.expected():
                break
            assert time.monotonic() < deadline, f"no run took burst {burst}: {runs}"
            time.sleep(2)
        finished = done
        assert {(r["run_type"], r["state"]) for r in finished} == {("asset_triggered", "success")}, finished


def test_ctrl_c_stops_make_up_and_everything_it_started(platform):
    """Last in the module: SIGINT, as Ctrl-C sends it, ends `make up` and every process it started."""
    _, up = platform
    started = up.started()
    up.process.send_signal(signal.SIGINT)
    assert up.process.wait(timeout=90) == 0, "\n".join(up.seen)
    up.until(r"^stopped$", 5)
    assert not listening(up.port) and not listening(up.zookeeper.port)
    deadline = time.monotonic() + 10
    while left := alive(started | up.started()):
        assert time.monotonic() < deadline, f"processes left running after Ctrl-C: {left}"
        time.sleep(0.5)
