"""The platform's other DAGs under a real scheduler, on a `make up` of their own (`make test-long`: its
core, the RFC-22 scenario, is test_local_airflow.py's): the restore DAG beside a writer at work, a
newcomer's backfill from the trigger form in headless Chromium, Airflow's own backfills (`airflow backfill
create`) of the backfill DAG and their refusal by the others, a services group's budget, and a Kafka-fed
table's ingest woken by new messages through the triggerer.
"""

from __future__ import annotations

import datetime as dt
import json
import re
import time

import pytest

from hudi_ops.airflow.dag_factory.factory import services_dag_id
from hudi_ops.airflow.dag_factory.services_group import state_key
from hudi_ops.airflow.hooks.airflow_api import AirflowApiError
from hudi_ops.format.meta_client import MetaClient
from hudi_ops.job_specs import IngestSpec, SavepointSpec
from hudi_ops.read.table_need import measure
from hudi_ops.read.table_overview import COMPLETED, ROLLED_BACK, TableOverview
from hudi_ops.read.table_services import COMPACTION
from hudi_ops.spark.__main__ import main
from local_platform.demo.rfc22 import (
    BACKFILL_DAG,
    INGEST_DAG,
    OLD_DAYS,
    SCHEMA,
    SERVICES_DAG,
    TABLE,
    produce,
)
from tests.airflow.browser import filled
from tests.airflow.make_up import (
    GROUP,
    GROUP_COMPACTION,
    GROUP_DAG,
    GROUP_TABLES,
    RESTORE_DAG,
    STREAM,
    STREAM_TOPIC,
)
from tests.integration.processes import run_job
from tests.tables import COLUMNS, Model, read_hudi_rs, trips, write_source

pytestmark = [pytest.mark.spark, pytest.mark.slow, pytest.mark.long]  # spark-submit jobs of its own; minutes in all

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
                              table_type="MERGE_ON_READ", hoodie_conf=COMPACTION.inline_off)
            assert main(spec.to_argv(), spark=spark) == 0
        models[demo.root / "group" / name] = model
    return models


@pytest.fixture(scope="module")
def seeded(platform):
    """The demo's table after its first step: the topic's first messages ingested by the ingest DAG, the
    backfills' source folders written, the services paused."""
    demo, up = platform
    demo.seed(up.airflow, up.kafka)
    assert up.airflow.run_state(INGEST_DAG, "ingest_1") == "success"
    return demo, up.airflow


def test_the_restore_dag_waits_for_a_writer_at_work_restores_and_gives_the_writers_back(seeded, platform, tmp_path):
    """A savepoint, then an ingest that is running when the restore DAG is triggered: the restore pauses
    the writer DAGs, waits for the ingest's task to end, undoes its commit, and unpauses what it paused."""
    demo, airflow = seeded
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
        seeded, browser, artifacts):
    """Airflow's UI in headless Chromium, as a user clicks through it (screenshots in `artifacts`):
    the login form, the DAG list, the backfill's trigger form and its Params (the window optional: an
    Airflow backfill's runs need none), a window that ends before it starts, a window that runs, and the
    table's timeline with the commits it made."""
    from hudi_ops.airflow.ui.timeline_chart import ACTION_COLOURS

    demo, airflow = seeded
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
    drawn = browser.wait_drawn(filled(ACTION_COLOURS["deltacommit"]), in_frame=True, what="the timeline in the tab")
    browser.screenshot(artifacts / "7-timeline-tab.png")
    commits = sum(s.action == "deltacommit" and s.status != ROLLED_BACK
                  for s in TableOverview.load(demo.table_path).instants)
    assert drawn == commits + 1  # and the legend's swatch


BACKFILL_DAYS = ("2026-10-01", "2026-10-02")


def test_an_airflow_backfill_commits_each_day_once_and_a_rerun_writes_the_corrections_each_key_once(seeded):
    """`airflow backfill create` on the backfill DAG, through the scheduler: a run per day, each writing
    its day's folder in one commit; again with `--reprocess-behavior completed` (the same runs, cleared)
    after a day's source was corrected: each day written again, the correction in, each key once. A
    manual run with no window fails at once."""
    demo, airflow = seeded
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


def test_the_other_dags_refuse_airflow_backfills(seeded):
    _, airflow = seeded
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
