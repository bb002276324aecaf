"""The DAG factory: the example tables config, and backfill Params refused before Spark starts."""

from __future__ import annotations

import itertools
import json
import os
import re
import shutil

import pytest
import yaml

from hudi_ops.errors import ConfigError
from tests.airflow.conftest import REPO_DAGS, SPARK_CONF, repo_dags


def test_the_example_config_gives_an_ingest_and_a_backfill_dag_per_table(airflow_db):
    from airflow.dag_processing.dagbag import DagBag

    bag = DagBag(dag_folder=str(REPO_DAGS))
    assert bag.import_errors == {}
    ingest, backfill = bag.get_dag("hudi_ingest__trips"), bag.get_dag("hudi_backfill__trips")
    assert ingest.max_active_runs == 1 and ingest.schedule == "*/10 * * * *"
    assert backfill.max_active_runs == 4
    assert set(backfill.params) == {"start", "end", "operation", "source_path", "source_format", "parallelism"}
    assert backfill.params["start"] is None and backfill.params["end"] is None  # an Airflow backfill's run has its day
    task = backfill.get_task("backfill")
    assert task.zookeeper_conn_id == ingest.get_task("ingest").zookeeper_conn_id == "hudi_zookeeper_default"


def test_a_table_with_services_gets_a_services_dag_and_its_writers_leave_those_services_to_it(airflow_db):
    from airflow.dag_processing.dagbag import DagBag
    from airflow.sdk import AssetOrTimeSchedule

    bag = DagBag(dag_folder=str(REPO_DAGS))
    services = bag.get_dag("hudi_services__trips")
    assert (services.max_active_runs, services.max_active_tasks) == (1, 1)  # no pool to set up by hand
    assert isinstance(services.timetable, AssetOrTimeSchedule)
    assert [a.uri for a in services.timetable.asset_condition.objects] == \
        ["file:///opt/hudi-ops/data/hudi/trips"]  # every commit of the table's writers triggers a run
    tasks = {t.task_id: t for t in services.tasks}
    assert set(tasks) == {"schedule_clustering", "execute_clustering", "clean", "archive"}
    assert {t.pool for t in tasks.values()} == {"default_pool"}
    assert tasks["execute_clustering"].plan_task_id == "schedule_clustering"
    assert tasks["clean"].upstream_task_ids == {"execute_clustering"}
    assert tasks["archive"].upstream_task_ids == {"clean"}
    assert tasks["clean"].hoodie_conf["hoodie.cleaner.commits.retained"] == "10"
    # archival deletes instant files that concurrent jobs read: only the archive task does it
    for task in ("schedule_clustering", "execute_clustering", "clean"):
        assert tasks[task].hoodie_conf["hoodie.archive.automatic"] == "false"
    assert "hoodie.archive.automatic" not in tasks["archive"].hoodie_conf
    for writer in (bag.get_dag("hudi_ingest__trips").get_task("ingest"),
                   bag.get_dag("hudi_backfill__trips").get_task("backfill")):
        assert writer.hoodie_conf["hoodie.clean.automatic"] == "false"
        assert writer.hoodie_conf["hoodie.clustering.inline"] == "false"
        assert writer.hoodie_conf["hoodie.archive.automatic"] == "false"
        assert "hoodie.compact.inline" not in writer.hoodie_conf  # compaction is not one of its services


def test_a_services_group_is_one_dag_for_its_tables_services_bounded_by_its_budget(airflow_db):
    from airflow.sdk import CronTriggerTimetable

    from hudi_ops.airflow.dag_factory.factory import dags_from_config

    table = {"record_key": "id", "table_type": "MERGE_ON_READ", "hoodie_conf": {"hoodie.metadata.enable": "true"}}
    dags = dags_from_config({
        "services_groups": {"fleet": {"budget": 2, "schedule": "*/10 * * * *"}},
        "tables": {"hot": {**table, "base_path": "/t/hot", "ingest": {"source_path": "/in/hot"},
                           "services": {"group": "fleet", "priority": 3, "compaction": {}, "clean": {}}},
                   "cold": {**table, "base_path": "/t/cold", "services": {"group": "fleet", "clustering": {}}},
                   "own": {**table, "base_path": "/t/own", "services": {"clean": {}}}}})
    assert sorted(dags) == ["hudi_ingest__hot", "hudi_restore__cold", "hudi_restore__hot", "hudi_restore__own",
                            "hudi_services__own", "hudi_services_group__fleet"]  # grouped: no services DAG
    group = dags["hudi_services_group__fleet"]
    assert (group.max_active_runs, group.max_active_tasks) == (1, 2)
    assert isinstance(group.timetable, CronTriggerTimetable) and group.timetable.expression == "*/10 * * * *"
    plan, service = group.get_task("plan"), group.get_task("service")
    assert service.upstream_task_ids == {"plan"} and service.partial_kwargs["retries"] == 2
    tables = plan.op_kwargs["tables"]
    assert (plan.op_kwargs["policy"], plan.op_kwargs["budget"], tables["hot"]["priority"]) == ("need", 2, 3.0)
    assert set(tables["hot"]["tasks"]) == {"compaction", "clean", "archive"}
    assert set(tables["cold"]["tasks"]) == {"clustering", "archive"}
    compaction = tables["hot"]["tasks"]["compaction"]
    assert (compaction["service"], compaction["base_path"], compaction["table_name"]) == ("compaction", "/t/hot", "hot")
    # what a services DAG's tasks would run with: archival left to the archive task, inline services off
    assert compaction["hoodie_conf"]["hoodie.archive.automatic"] == "false"
    assert "hoodie.archive.automatic" not in tables["hot"]["tasks"]["archive"]["hoodie_conf"]
    writer = dags["hudi_ingest__hot"].get_task("ingest")
    assert writer.hoodie_conf["hoodie.compact.inline"] == "false" and writer.hoodie_conf["hoodie.clean.automatic"] \
        == "false"
    # a restore of a grouped table pauses the group
    assert dags["hudi_restore__hot"].get_task("pause_writers").writer_dag_ids == [
        "hudi_ingest__hot", "hudi_services_group__fleet"]


def fleet_config(tables: int) -> dict:
    """`tables` tables with an ingest, a backfill and services, every other one in the `fleet` group."""
    def table(i: int) -> dict:
        services = {"clean": {}, **({"group": "fleet"} if i % 2 else {})}
        return {"base_path": f"/t/t{i}", "record_key": "id", "ingest": {"source_path": f"/in/t{i}"},
                "backfill": {}, "services": services}
    return {"services_groups": {"fleet": {}}, "tables": {f"t{i}": table(i) for i in range(tables)}}


def test_sharded_dag_files_give_each_dag_once_and_each_tables_dags_together(airflow_db):
    from hudi_ops.airflow.dag_factory.factory import Shard, dags_from_config, table_of_dag

    config = fleet_config(12)
    whole = dags_from_config(config)
    shards = [dags_from_config(config, shard=Shard(i, 3)) for i in range(3)]
    assert sorted(itertools.chain.from_iterable(shards)) == sorted(whole)  # each DAG in one shard exactly
    assert all(shards)  # 12 tables spread over the 3
    for dags in shards:
        tables = {table_of_dag(d) for d in dags} - {None}
        assert {d for d in whole if table_of_dag(d) in tables} <= set(dags)  # a table's DAGs stay together
    (group,) = [dags["hudi_services_group__fleet"] for dags in shards if "hudi_services_group__fleet" in dags]
    assert set(group.get_task("plan").op_kwargs["tables"]) == {f"t{i}" for i in range(1, 12, 2)}  # every member
    # a table keeps its shard as others come and go: none of its DAGs moves to another file
    grown = fleet_config(20)
    assert all(set(dags) <= set(dags_from_config(grown, shard=Shard(i, 3))) for i, dags in enumerate(shards))
    with pytest.raises(ValueError, match="shard 3 of 3: give a shard from 0 to shards - 1"):
        Shard(3, 3)


def test_sharded_dag_files_load_the_fleets_dags_in_airflow(airflow_db, tmp_path, monkeypatch):
    """Three copies of the DAG file, each naming its shard, in place of dags/hudi_ops_tables.py."""
    from airflow.dag_processing.dagbag import DagBag

    from hudi_ops.airflow.dag_factory.factory import dags_from_config

    config = tmp_path / "tables.yaml"
    config.write_text(yaml.safe_dump(fleet_config(12)))
    monkeypatch.setenv("HUDI_OPS_TABLES_CONFIG", str(config))
    folder = tmp_path / "dags"
    folder.mkdir()
    for shard in range(3):
        (folder / f"hudi_ops_tables_{shard}.py").write_text(
            "from hudi_ops.airflow.dag_factory.dag_files import tables_dags\n\n"
            f"globals().update(tables_dags(__file__, shard={shard}, shards=3))\n")
    bag = DagBag(dag_folder=str(folder))
    assert bag.import_errors == {} and sorted(bag.dag_ids) == sorted(dags_from_config(fleet_config(12)))
    assert len({bag.get_dag(d).fileloc for d in bag.dag_ids}) == 3


def test_a_dags_params_are_each_tasks_as_airflow_gives_them(airflow_db):
    """The backfill and restore DAGs get their params once their tasks are built (an operator built in a DAG
    with params copies them once per class); each task still has its own copy, marked as the DAG's, and a
    run's values go to the task's, as for any DAG with params."""
    from airflow.sdk.definitions.param import process_params

    from hudi_ops.airflow.dag_factory.factory import dags_from_config

    dags = dags_from_config({"tables": {"t": {"base_path": "/t", "record_key": "id",
                                              "backfill": {"source_path": "/history"}}}})
    for dag in (dags["hudi_backfill__t"], dags["hudi_restore__t"]):
        assert dag.params and {dag.params.get_param(k).source for k in dag.params} == {None}
        for task in dag.tasks:
            assert task.params.dump() == dag.params.dump(), task.task_id
            assert all(task.params.get_param(k).source == "dag" for k in task.params)
            assert not any(task.params.get_param(k) is dag.params.get_param(k) for k in dag.params)
    backfill = dags["hudi_backfill__t"]
    run = process_params(backfill, backfill.get_task("backfill"), {"start": "2026-01-01"}, suppress_exception=False)
    assert (run["start"], run["source_path"], run["operation"]) == ("2026-01-01", "/history", "UPSERT")
    assert backfill.params["start"] is None  # the DAG's own param keeps its default


def test_airflow_backfills_go_to_the_backfill_dag_alone_a_run_per_day_and_never_on_its_own(airflow_db):
    from airflow.dag_processing.dagbag import DagBag
    from airflow.timetables.base import TimeRestriction
    from pendulum import datetime

    from hudi_ops.airflow.timetables.daily_backfill import DailyBackfillTimetable

    bag = DagBag(dag_folder=str(REPO_DAGS))
    backfill = bag.get_dag("hudi_backfill__trips")
    assert isinstance(backfill.timetable, DailyBackfillTimetable) and backfill.timetable.periodic
    assert set(backfill.allowed_run_types) == {"backfill", "manual"}  # no scheduled run
    for other in ("hudi_ingest__trips", "hudi_services__trips", "hudi_restore__trips"):
        dag = bag.get_dag(other)
        assert "backfill" not in dag.allowed_run_types and "manual" in dag.allowed_run_types
        assert dag.description.endswith("Airflow backfills of the table: hudi_backfill__trips.")
    assert "scheduled" in bag.get_dag("hudi_ingest__trips").allowed_run_types  # it has a schedule

    def runs(restriction: TimeRestriction) -> list[tuple[str, str]]:
        out, info = [], None
        while info := backfill.timetable.next_dagrun_info_v2(last_dagrun_info=info, restriction=restriction):
            out.append((info.data_interval.start.isoformat(), info.data_interval.end.isoformat()))
        return out

    # what `airflow backfill create --from-date 2026-01-01 --to-date 2026-01-03` asks: a run per day
    assert runs(TimeRestriction(datetime(2026, 1, 1), datetime(2026, 1, 3), catchup=True)) == [
        (f"2026-01-0{d}T00:00:00+00:00", f"2026-01-0{d + 1}T00:00:00+00:00") for d in (1, 2, 3)]
    # what the scheduler asks of a DAG with no end date: nothing, ever
    assert runs(TimeRestriction(None, None, catchup=False)) == []
    assert runs(TimeRestriction(datetime(2026, 1, 1), None, catchup=True)) == []


def test_each_table_gets_a_restore_dag_that_stops_its_writers_around_the_restore(airflow_db):
    from airflow.dag_processing.dagbag import DagBag
    from airflow.sdk.definitions.param import ParamValidationError

    restore = DagBag(dag_folder=str(REPO_DAGS)).get_dag("hudi_restore__trips")
    assert restore.schedule is None and restore.max_active_runs == 1
    order = ["pause_writers", "wait_for_writers", "restore", "unpause_writers"]
    for before, after in itertools.pairwise(order):
        assert restore.get_task(after).upstream_task_ids == {before}
    assert restore.get_task("pause_writers").writer_dag_ids == \
        ["hudi_ingest__trips", "hudi_backfill__trips", "hudi_services__trips"]
    assert restore.get_task("unpause_writers").trigger_rule == "all_done"
    wait = restore.get_task("wait_for_writers")  # up to an hour: rescheduled between pokes, no slot held
    assert wait.mode == "reschedule" and wait.timeout == 60 * 60
    assert restore.get_task("restore").retries == 0
    with pytest.raises(ParamValidationError, match="does not match"):
        restore.test(run_conf={"savepoint": "yesterday"})


@pytest.mark.parametrize(("services", "hoodie_conf", "reason"), [
    ({"compaction": {}}, {}, "table 'trips' in tables.yaml: a compaction service needs `table_type: MERGE_ON_READ`"),
    ({"vacuum": {}}, {}, "table 'trips' in tables.yaml: unknown key `services.vacuum`"),
    ("hourly", {}, "table 'trips' in tables.yaml: `services`: Input should be a valid dictionary"),
    ({"clean": {}}, {"hoodie.clean.automatic": "true"},
     "runs clean in its services DAG but sets hoodie.clean.automatic=true for its writers"),
    ({"clustering": {"hoodie.archive.automatic": "true"}}, {},
     "runs archive in its services DAG but sets hoodie.archive.automatic=true for its clustering"),
])
def test_a_broken_services_section_names_the_fix_and_costs_only_its_tables_dags(
        airflow_db, services, hoodie_conf, reason, caplog):  # Airflow's logging set up before caplog's
    from hudi_ops.airflow.dag_factory.factory import dags_from_config

    table = {"base_path": "/t", "record_key": "id", "services": services, "hoodie_conf": hoodie_conf,
             "ingest": {"source_path": "/in"}}
    dags = dags_from_config({"tables": {"trips": table, "rides": {**table, "services": {"clean": {}},
                                                                  "hoodie_conf": {}}}}, origin="tables.yaml")
    assert sorted(dags) == ["hudi_ingest__rides", "hudi_restore__rides", "hudi_services__rides"]
    assert "no DAGs for table 'trips' in tables.yaml: " in caplog.text and reason in caplog.text  # the parse's log


def test_a_bad_table_is_an_import_error_naming_it_while_the_other_tables_dags_load(
        airflow_db, tmp_path, monkeypatch):
    """The repo's DAG files over a config whose `trips` has a schedule Airflow refuses: `rides` loads."""
    table = {"base_path": "/t", "record_key": "id"}
    config = {"tables": {"trips": {**table, "ingest": {"source_path": "/in", "schedule": "every 10 min"}},
                         "rides": {**table, "ingest": {"source_path": "/in", "schedule": "@hourly"}}}}
    with repo_dags(config, tmp_path, monkeypatch, refusals=True) as bag:
        assert sorted(bag.dag_ids) == ["hudi_ingest__rides", "hudi_restore__rides"]
        ((where, error),) = bag.import_errors.items()
    assert where.endswith("hudi_ops_tables_refused.py")
    assert f"ConfigError: table 'trips' in {tmp_path / 'tables.yaml'}: `ingest.schedule`: 'every 10 min' is not a " \
           "schedule Airflow takes (Exactly 5, 6 or 7 columns has to be specified for iterator expression.); " \
           "give a cron expression such as '*/10 * * * *'" in error


def test_each_dag_runs_on_its_own_spark_connection_and_settings_over_the_tables(
        airflow_db, zookeeper_connection, tmp_path, monkeypatch):
    config = {"tables": {"trips": {
        "base_path": str(tmp_path / "trips"), "record_key": "id", "spark_conn_id": "spark_cluster",
        "spark_conf": {"spark.executor.cores": "2", "spark.cores.max": "8"},
        "ingest": {"source_path": str(tmp_path / "landing"), "spark_conn_id": "spark_ingest",
                   "spark_conf": {"spark.executor.memory": "2g"}},
        "backfill": {"spark_conn_id": "spark_backfill", "spark_conf": {"spark.cores.max": "2"}},
        "services": {"clean": {}, "spark_conn_id": "spark_services", "spark_conf": {"spark.cores.max": "1"}}}}}
    with repo_dags(config, tmp_path, monkeypatch) as bag:
        ingest = bag.get_dag("hudi_ingest__trips").get_task("ingest")
        backfill = bag.get_dag("hudi_backfill__trips").get_task("backfill")
        services = bag.get_dag("hudi_services__trips").tasks
        restore = bag.get_dag("hudi_restore__trips").get_task("restore")
    table = {"spark.executor.cores": "2", "spark.cores.max": "8"}
    assert (ingest.spark_conn_id, ingest.conf) == ("spark_ingest", {**table, "spark.executor.memory": "2g"})
    assert (backfill.spark_conn_id, backfill.conf) == ("spark_backfill", {**table, "spark.cores.max": "2"})
    assert {(t.spark_conn_id, t.conf["spark.cores.max"]) for t in services} == {("spark_services", "1")}
    assert (restore.spark_conn_id, restore.conf) == ("spark_cluster", table)  # no section of its own: the table's


@pytest.fixture
def table_dags(airflow_db, zookeeper_connection, tmp_path, monkeypatch):
    """The repo's DAG file in the test dags folder, for a trips table under tmp_path."""
    config = {"defaults": {"spark_conf": SPARK_CONF},
              "tables": {"trips": {"base_path": str(tmp_path / "trips"), "record_key": "id",
                                   "partition_field": "city", "ordering_field": "ts",
                                   "ingest": {"source_path": str(tmp_path / "landing"), "schedule": "@hourly"},
                                   "backfill": {"max_active_runs": 2}}}}
    with repo_dags(config, tmp_path, monkeypatch) as bag:
        yield bag


@pytest.fixture
def backfill_dag(table_dags):
    return table_dags.get_dag("hudi_backfill__trips")


@pytest.mark.spark  # spark-submit jobs through dag.test()
def test_each_generated_dag_runs_end_to_end_and_leaves_what_hudi_rs_reads(table_dags, tmp_path):
    import hudi
    import pyarrow as pa
    import pyarrow.parquet as pq

    landing, history = tmp_path / "landing", tmp_path / "history"
    landing.mkdir()
    pq.write_table(pa.table({"id": [1, 2], "ts": [5, 5], "city": ["sf", "nyc"]}), landing / "a.parquet")
    for day, ids in (("2026-01-01", [2, 3]), ("2026-01-02", [4])):
        (history / f"dt={day}").mkdir(parents=True)
        pq.write_table(pa.table({"id": ids, "ts": [1] * len(ids), "city": ["nyc"] * len(ids)}),
                       history / f"dt={day}" / "part.parquet")
    ingest = table_dags.get_dag("hudi_ingest__trips").test()
    backfill = table_dags.get_dag("hudi_backfill__trips").test(
        run_conf={"start": "2026-01-01", "end": "2026-01-02", "source_path": str(history)}
    )
    assert (ingest.state, backfill.state) == ("success", "success")
    rows = pa.Table.from_batches(hudi.HudiTable(str(tmp_path / "trips")).read()).select(["id", "ts"]).to_pylist()
    assert sorted((r["id"], r["ts"]) for r in rows) == [(1, 5), (2, 5), (3, 1), (4, 1)]  # a late event lost


def test_a_window_that_ends_before_it_starts_fails_the_run_before_spark_starts(backfill_dag, tmp_path, capfd):
    run = backfill_dag.test(run_conf={"start": "2026-02-01", "end": "2026-01-01", "source_path": str(tmp_path)})
    (ti,) = run.get_task_instances()
    assert run.state == "failed" and ti.try_number == 1
    captured = capfd.readouterr()
    log = captured.out + captured.err  # dag.test() writes the task's log to the console
    assert "bad job arguments, not retried" in log and "ends (2026-01-01) before it starts (2026-02-01)" in log
    assert "Spark-Submit cmd" not in log  # the provider logs this line when it starts spark-submit


@pytest.mark.parametrize("conf", [{}, {"start": "2026-01-01"}, {"end": "2026-01-01"}])
def test_a_manual_run_without_a_window_fails_at_once_naming_the_fix(backfill_dag, tmp_path, capfd, conf):
    run = backfill_dag.test(run_conf={**conf, "source_path": str(tmp_path)})
    (ti,) = run.get_task_instances()
    assert run.state == "failed" and ti.try_number == 1
    captured = capfd.readouterr()
    log = captured.out + captured.err
    assert "bad job arguments, not retried: a manual run of hudi_backfill__trips needs a window: trigger it with " \
           "`start` and `end` (YYYY-MM-DD), or run `airflow backfill create --dag-id hudi_backfill__trips " \
           "--from-date ... --to-date ...`" in log
    assert "Spark-Submit cmd" not in log


@pytest.mark.parametrize(("conf", "reason"), [
    ({"start": "2026-01-01", "end": "2026-01-02", "operation": "MERGE", "source_path": "/in"}, "MERGE"),
    ({"start": "2026-01-01", "end": "2026-01-02"}, "source_path"),
    ({"start": "yesterday", "end": "2026-01-02", "source_path": "/in"}, "yesterday"),
])
def test_params_that_break_the_schema_are_refused_before_any_run(backfill_dag, conf, reason):
    from airflow.sdk.definitions.param import ParamValidationError

    with pytest.raises(ParamValidationError, match=reason):
        backfill_dag.test(run_conf=conf)


@pytest.mark.parametrize(("tables", "reason"), [
    ({"trips": "oops"}, "no DAGs for table 'trips' in tables.yaml: it is a str, not a mapping of settings"),
    ({"trips": {"record_key": "id"}}, "no DAGs for table 'trips' in tables.yaml: `base_path` is missing; add it"),
])
def test_a_broken_table_names_the_table_and_the_fix(airflow_db, tables, reason, caplog):
    from hudi_ops.airflow.dag_factory.factory import dags_from_config

    assert dags_from_config({"tables": tables}, origin="tables.yaml") == {}
    assert reason in caplog.text


def test_a_config_with_no_tables_fails_as_a_whole():
    from hudi_ops.airflow.dag_factory.factory import dags_from_config
    from hudi_ops.errors import ConfigError

    with pytest.raises(ConfigError, match=re.escape("tables.yaml has no `tables:` mapping")):
        dags_from_config({"tables": {}}, origin="tables.yaml")


def test_generated_dag_ids_name_their_table():
    from hudi_ops.airflow.dag_factory.factory import (
        backfill_dag_id,
        ingest_dag_id,
        restore_dag_id,
        services_dag_id,
        table_of_dag,
    )

    assert table_of_dag(ingest_dag_id("trips")) == table_of_dag(backfill_dag_id("trips")) == "trips"
    assert table_of_dag(services_dag_id("trips")) == table_of_dag(restore_dag_id("trips")) == "trips"
    assert table_of_dag("some_other_dag") is None


def test_under_airflows_dag_processor_a_bad_table_is_an_import_error_and_the_others_dags_run(tmp_path):
    """Airflow's own dag-processor over the repo's DAG files: the refusal is an import error Airflow lists,
    and the other table's DAGs are neither stale nor broken (a DAG file's import error would make all of
    its DAGs so, and Airflow would neither schedule nor trigger them)."""
    import json
    import subprocess
    import sys

    home = tmp_path / "airflow"
    (home / "dags").mkdir(parents=True)
    for name in ("hudi_ops_tables.py", "hudi_ops_tables_refused.py"):
        shutil.copy(REPO_DAGS / name, home / "dags" / name)
    config = tmp_path / "tables.yaml"
    table = {"base_path": str(tmp_path / "t"), "record_key": "id", "ingest": {"source_path": "/in"}}
    config.write_text(yaml.safe_dump({"tables": {
        "trips": {**table, "zookeeper_conn_id": None, "backfill": {"max_active_runs": 1}},
        "rides": {**table, "backfill": {"source_path": "/history"}}}}))
    env = {**os.environ, "AIRFLOW_HOME": str(home), "AIRFLOW__CORE__DAGS_FOLDER": str(home / "dags"),
           "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN": f"sqlite:///{home}/airflow.db", "HUDI_OPS_TABLES_CONFIG": str(config),
           }

    def airflow(*args: str, exit_code: int = 0) -> str:
        done = subprocess.run([sys.executable, "-m", "airflow", *args], env=env, capture_output=True, text=True)
        assert done.returncode == exit_code, done.stdout[-3000:] + done.stderr[-3000:]
        return done.stdout

    def listed(*args: str, exit_code: int = 0) -> list[dict[str, str]]:
        out = airflow(*args, "--output", "json", exit_code=exit_code)
        return json.loads(out[out.index("\n[") + 1:] if not out.startswith("[") else out)  # after CLI warnings

    airflow("db", "migrate")
    airflow("dag-processor", "--num-runs", "1")
    (error,) = listed("dags", "list-import-errors", exit_code=1)  # 1: there are import errors
    assert error["filepath"] == "hudi_ops_tables_refused.py"
    assert f"ConfigError: table 'trips' in {config}: `zookeeper_conn_id` is null (no lock), yet its ingest DAG and " \
           "its backfill DAG write the table at once; give the table a zookeeper_conn_id" in error["error"]
    assert {d["dag_id"] for d in listed("dags", "list")} == \
        {"hudi_ingest__rides", "hudi_backfill__rides", "hudi_restore__rides"}
    (details,) = listed("dags", "details", "hudi_ingest__rides")  # what the scheduler and the trigger API check
    assert (details["is_stale"], details["has_import_errors"]) == ("False", "False")
    # the backfill DAG: backfillable, and no run the scheduler would ever start by itself
    (backfill,) = listed("dags", "details", "hudi_backfill__rides")
    assert (backfill["is_backfillable"], backfill["next_dagrun_run_after"]) == ("True", None)


def test_an_ingests_bound_per_commit_and_its_run_reach_its_job(airflow_db):
    from hudi_ops.airflow.dag_factory.factory import dags_from_config

    dags = dags_from_config({"tables": {"t": {
        "base_path": "/data/t", "record_key": "id", "zookeeper_conn_id": None,
        "ingest": {"source_path": "/landing/t", "source_limit_files": 5, "source_limit_bytes": 1_000_000}}}})
    spec = dags["hudi_ingest__t"].get_task("ingest").job_spec({"run_id": "scheduled__1"}, {})
    argv = spec.to_argv()
    assert argv[argv.index("--source-limit-files") + 1] == "5" and argv[argv.index("--source-limit") + 1] == "1000000"
    assert argv[argv.index("--run-id") + 1] == "scheduled__1"  # its retries find what it committed


def test_backfill_runs_at_once_are_bounded_for_airflows_own_backfills_too(airflow_db):
    """`airflow backfill create` runs up to its own --max-active-runs (10 by default), whatever the DAG's;
    the task's bound holds across them, so a table without a lock keeps its one writer."""
    from hudi_ops.airflow.dag_factory.factory import dags_from_config

    dags = dags_from_config({"tables": {"t": {
        "base_path": "/data/t", "record_key": "id", "zookeeper_conn_id": None,
        "backfill": {"source_path": "/history/t", "max_active_runs": 1}}}})
    dag = dags["hudi_backfill__t"]
    assert dag.max_active_runs == 1 and dag.get_task("backfill").max_active_tis_per_dag == 1


def test_a_kafka_ingest_on_new_messages_is_scheduled_on_its_topics_watcher_and_at_most_its_cron_apart(airflow_db):
    """With several topics, each is a pipeline of its own in the DAG."""
    from airflow.providers.apache.kafka.triggers.msg_queue import KafkaMessageQueueTrigger
    from airflow.sdk import AssetOrTimeSchedule

    from hudi_ops.airflow.dag_factory.factory import dags_from_config
    from hudi_ops.airflow.dag_factory.tables_config import parse_tables_config
    from hudi_ops.options.keys import StreamerConfig

    def config(**ingest):
        return {"tables": {"t": {"base_path": "/data/t", "record_key": "id", "zookeeper_conn_id": None, "ingest": {
            "source_kind": "kafka", "kafka_topic": "trips", "kafka_conn_id": "brokers", **ingest}}}}

    dag = dags_from_config(config(on_new_messages=True, schedule="*/30 * * * *"))["hudi_ingest__t"]
    assert isinstance(dag.timetable, AssetOrTimeSchedule)
    assert dag.timetable.timetable.expression == "*/30 * * * *"  # the longest wait between runs
    (asset,) = dag.timetable.asset_condition.objects
    (watcher,) = asset.watchers
    assert isinstance(watcher.trigger, KafkaMessageQueueTrigger)
    _, kwargs = watcher.trigger.serialize()
    assert (kwargs["topics"], kwargs["kafka_config_id"]) == (["trips"], "brokers")
    assert kwargs["apply_function"] == "hudi_ops.airflow.dag_factory.kafka_events.new_message"
    only = dags_from_config(config(on_new_messages=True))["hudi_ingest__t"]  # no schedule: messages alone
    assert [a.name for a in only.timetable.asset_condition.objects] == [asset.name]
    assert [t.kafka_topic for t in only.tasks] == ["trips"] and only.tasks[0].task_id == "ingest"
    # several topics: a pipeline each (its own task and checkpoint), one watcher over them all
    both = dags_from_config(config(kafka_topic=["trips", "fares"], on_new_messages=True))["hudi_ingest__t"]
    assert {t.task_id: t.kafka_topic for t in both.tasks} == {"ingest__trips": "trips", "ingest__fares": "fares"}
    (watched,) = both.timetable.asset_condition.objects
    assert watched.watchers[0].trigger.serialize()[1]["topics"] == ["trips", "fares"]
    for bad, says in ((config(on_new_messages=True, schedule="@continuous"), "longest wait"),
                      (config(kafka_topic=["trips", "trips"]), "lists a topic twice"),
                      ({"tables": {"t": {"base_path": "/data/t", "record_key": "id", "ingest": {
                          "source_path": "/landing", "on_new_messages": True}}}}, "watches a topic")):
        (refused,) = parse_tables_config(bad, "test").refused.values()
        assert says in refused and dags_from_config(bad) == {}
    avro = dags_from_config(config(kafka_value_format="confluent_avro", kafka_value_schema="/schemas/trip.avsc"))
    (task,) = avro["hudi_ingest__t"].tasks  # the schema as HoodieStreamer's file-based schema provider's option
    assert task.kafka_value_format == "confluent_avro"
    assert task.hoodie_conf[StreamerConfig.SOURCE_SCHEMA_FILE.name] == "/schemas/trip.avsc"
    # two tables watching one topic through one connection would share its consumer group: the second refused
    two = {"tables": {name: config(on_new_messages=True)["tables"]["t"] for name in ("a", "b")}}
    parsed = parse_tables_config(two, "test")
    assert set(parsed.tables) == {"a"} and "table 'a' watches too" in parsed.refused["b"]
    two["tables"]["b"]["ingest"]["kafka_conn_id"] = "brokers_for_b"
    assert set(parse_tables_config(two, "test").tables) == {"a", "b"}


@pytest.mark.spark  # a spark-submit through dag.test(), then the session's Spark reads by name
def test_a_tables_catalog_makes_each_job_sync_it_to_the_metastore_its_connection_names(
        airflow_db, zookeeper_connection, hive_metastore, spark, tmp_path, monkeypatch):
    import pyarrow as pa
    import pyarrow.parquet as pq

    host, port = hive_metastore.uri.removeprefix("thrift://").split(":")
    monkeypatch.setenv("AIRFLOW_CONN_METASTORE_DEFAULT", json.dumps(
        {"conn_type": "hive_metastore", "host": host, "port": int(port)}))
    config = {"defaults": {"spark_conf": SPARK_CONF},
              "tables": {"trips": {"base_path": str(tmp_path / "trips"), "record_key": "id",
                                   "partition_field": "city", "ordering_field": "ts", "table_type": "MERGE_ON_READ",
                                   "catalog": {"database": "analytics", "table": "nyc_trips"},
                                   "ingest": {"source_path": str(tmp_path / "landing")},
                                   "backfill": {}, "services": {"compaction": {}, "clean": {}}}}}
    with repo_dags(config, tmp_path, monkeypatch) as bag:
        jobs = [t for dag_id in bag.dag_ids if dag_id.endswith("__trips") for t in bag.get_dag(dag_id).tasks
                if hasattr(t, "hive_metastore_conn_id")]
        assert {t.task_id for t in jobs} >= {"ingest", "backfill", "schedule_compaction", "execute_compaction",
                                             "clean", "archive", "restore"}
        for task in jobs:  # every job of the table knows where, and asks Hudi for its sync
            assert task.hive_metastore_conn_id == "metastore_default", task.task_id
            assert (task.hoodie_conf["hoodie.datasource.meta.sync.enable"],
                    task.hoodie_conf["hoodie.datasource.hive_sync.database"],
                    task.hoodie_conf["hoodie.datasource.hive_sync.table"]) == ("true", "analytics", "nyc_trips")
        ingest = bag.get_dag("hudi_ingest__trips")
        assert ingest.get_task("ingest").job_options()["hoodie.datasource.hive_sync.metastore.uris"] == \
            hive_metastore.uri
        (tmp_path / "landing").mkdir()
        pq.write_table(pa.table({"id": [1, 2], "ts": [5, 5], "city": ["sf", "nyc"]}),
                       tmp_path / "landing" / "a.parquet")
        assert ingest.test().state == "success"
    rows = spark.table("analytics.nyc_trips_rt").select("id", "ts", "city").collect()
    assert sorted(tuple(r) for r in rows) == [(1, 5, "sf"), (2, 5, "nyc")]
    assert sorted(r[0] for r in spark.sql("SHOW PARTITIONS analytics.nyc_trips_ro").collect()) == ["nyc", "sf"]


def test_a_catalog_without_its_connection_fails_the_task_naming_the_connection_to_add(monkeypatch):
    from hudi_ops.airflow.operators.spark_jobs import HudiIngestOperator

    monkeypatch.delenv("AIRFLOW_CONN_NOWHERE", raising=False)
    task = HudiIngestOperator(task_id="ingest", base_path="/t", table_name="trips", record_key_field="id",
                              source_path="/in", zookeeper_conn_id=None, hive_metastore_conn_id="nowhere",
                              hoodie_conf={"hoodie.datasource.meta.sync.enable": "true"})
    with pytest.raises(ConfigError, match="no Airflow connection 'nowhere': add one of type hive_metastore"):
        task.job_options()


def test_a_tables_validators_run_on_its_writers_and_not_its_services(airflow_db, zookeeper_connection, tmp_path,
                                                                     monkeypatch):
    config = {"tables": {"trips": {
        "base_path": str(tmp_path / "trips"), "record_key": "id", "table_type": "COPY_ON_WRITE",
        "validators": {"single_result": ["select count(*) from <TABLE_NAME> where fare < 0#0"],
                       "equality": ["select count(*) from <TABLE_NAME> where city = 'sf'"]},
        "ingest": {"source_path": str(tmp_path / "landing")}, "backfill": {}, "services": {"clean": {}}}}}
    with repo_dags(config, tmp_path, monkeypatch) as bag:
        writers = [bag.get_dag("hudi_ingest__trips").get_task("ingest"),
                   bag.get_dag("hudi_backfill__trips").get_task("backfill")]
        services = bag.get_dag("hudi_services__trips").tasks
    for task in writers:
        assert task.hoodie_conf["hoodie.precommit.validators"] == (
            "org.apache.hudi.client.validator.SqlQuerySingleResultPreCommitValidator,"
            "org.apache.hudi.client.validator.SqlQueryEqualityPreCommitValidator")
        assert task.hoodie_conf["hoodie.precommit.validators.single.value.sql.queries"] == \
            "select count(*) from <TABLE_NAME> where fare < 0#0"
        assert task.hoodie_conf["hoodie.precommit.validators.equality.sql.queries"] == \
            "select count(*) from <TABLE_NAME> where city = 'sf'"
    assert services and all("hoodie.precommit.validators" not in t.hoodie_conf for t in services)


def test_a_tables_metrics_turn_hudis_reporter_on_for_every_job_of_it_or_of_every_table(airflow_db, zookeeper_connection,
                                                                                     tmp_path, monkeypatch):
    from hudi_ops.airflow.dag_factory import tables_config

    gateway = {"hoodie.metrics.reporter.type": "PROMETHEUS_PUSHGATEWAY", "hoodie.metrics.pushgateway.port": 9091}
    config = {"defaults": {"metrics": gateway},  # every table's, but the one that says otherwise
              "tables": {"trips": {"base_path": str(tmp_path / "trips"), "record_key": "id",
                                   "table_type": "MERGE_ON_READ",
                                   "ingest": {"source_path": str(tmp_path / "landing")}, "backfill": {},
                                   "services": {"compaction": {}, "clean": {}}},
                         "quiet": {"base_path": str(tmp_path / "quiet"), "record_key": "id",
                                   "metrics": {"hoodie.metrics.on": False},
                                   "ingest": {"source_path": str(tmp_path / "landing2")}}}}
    with repo_dags(config, tmp_path, monkeypatch) as bag:
        jobs = [t for dag_id in bag.dag_ids if dag_id.endswith("__trips") for t in bag.get_dag(dag_id).tasks
                if hasattr(t, "hoodie_conf")]
        quiet = bag.get_dag("hudi_ingest__quiet").get_task("ingest")
    assert {t.task_id for t in jobs} >= {"ingest", "backfill", "schedule_compaction", "execute_compaction", "clean",
                                         "archive", "restore"}
    for task in jobs:
        assert {k: task.hoodie_conf.get(k) for k in ("hoodie.metrics.on", "hoodie.metrics.reporter.type",
                                                      "hoodie.metrics.pushgateway.port")} == {
            "hoodie.metrics.on": "true", "hoodie.metrics.reporter.type": "PROMETHEUS_PUSHGATEWAY",
            "hoodie.metrics.pushgateway.port": "9091"}, task.task_id
    # each job's own group on the gateway, kept after the job's JVM for Prometheus to scrape
    options = bag.get_dag("hudi_services__trips").get_task("execute_compaction").job_options()
    assert (options["hoodie.metrics.pushgateway.job.name"], options["hoodie.metrics.pushgateway.delete.on.shutdown"],
            options["hoodie.metrics.pushgateway.random.job.name.suffix"]) == ("hudi_ops_compact", "false", "false")
    assert quiet.hoodie_conf["hoodie.metrics.on"] == "false"  # its own `metrics` over the defaults', as a whole
    assert "hoodie.metrics.reporter.type" not in quiet.hoodie_conf
    for bad, says in (({"hoodie.index.type": "BLOOM"}, "not hoodie.index.type; put other options under `hoodie_conf`"),
                      ({"hoodie.metrics.reporter.type": "STATSD"},
                       "hoodie.metrics.reporter.type='STATSD' is not valid"),
                      ({}, "`metrics` needs hoodie.metrics.reporter.type")):
        table = {"base_path": "/t", "record_key": "id", "metrics": bad}
        refused = tables_config.parse_tables_config({"tables": {"t": table}})
        assert says in refused.refused["t"], refused.refused


def test_a_tables_freshness_goal_is_its_ingest_dags_deadline_alert():
    import datetime as dt

    from airflow.sdk import AsyncCallback, DeadlineReference

    from hudi_ops.airflow.dag_factory import tables_config
    from hudi_ops.airflow.dag_factory.factory import dags_from_config
    from hudi_ops.airflow.dag_factory.freshness import table_late

    config = {"tables": {"trips": {"base_path": "/data/trips", "record_key": "id", "freshness": 30,
                                   "ingest": {"source_path": "/landing"}, "backfill": {}}}}
    dags = dags_from_config(config)
    (alert,) = dags["hudi_ingest__trips"].deadline
    assert alert.reference == DeadlineReference.DAGRUN_QUEUED_AT and alert.interval == dt.timedelta(minutes=30)
    assert alert.callback == AsyncCallback(table_late, kwargs={"table": "trips", "goal_minutes": 30})
    assert dags["hudi_ingest__trips"].get_task("ingest").freshness == 30
    assert not dags["hudi_backfill__trips"].deadline  # a backfill brings old days: no freshness to keep
    # without a goal, no deadline; without an ingest, no goal to keep
    del config["tables"]["trips"]["freshness"]
    assert not dags_from_config(config)["hudi_ingest__trips"].deadline
    refused = tables_config.parse_tables_config(
        {"tables": {"t": {"base_path": "/t", "record_key": "id", "freshness": 10, "backfill": {}}}}).refused["t"]
    assert "`freshness` is a goal for the table's ingest" in refused

