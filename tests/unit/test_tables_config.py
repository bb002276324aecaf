"""The tables config as a typed model: the repo's example parses, YAML's numbers and booleans become the
text Hudi reads, defaults fill every table, and a bad table is refused alone, naming the table, the key
and the fix, while the others stay."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from hudi_ops.airflow.dag_factory.tables_config import parse_tables_config, read_tables_config
from hudi_ops.errors import ConfigError

REPO = Path(__file__).resolve().parents[2]
TABLE = {"base_path": "/data/trips", "record_key": "trip_id"}


def test_the_repos_example_config_parses():
    trips = read_tables_config(REPO / "dags" / "tables.yaml").tables["trips"]
    assert (trips.record_key, trips.partition_field, trips.ordering_field) == ("uuid", "city", "ts")
    assert trips.services is not None and trips.services.runs == ("clustering", "clean")
    assert trips.backfill is not None and trips.backfill.max_active_runs == 4


def test_options_are_text_and_defaults_fill_every_table():
    config = parse_tables_config({
        "defaults": {"spark_conn_id": "spark_cluster", "spark_conf": {"spark.executor.cores": 2}},
        "tables": {"trips": {**TABLE, "hoodie_conf": {"hoodie.metadata.enable": True, "hoodie.keep.max.commits": 40},
                             "services": {"clustering": None, "clean": {"hoodie.cleaner.commits.retained": 10}}},
                   "rides": {**TABLE, "spark_conn_id": "spark_local"}}})
    trips, rides = config.tables["trips"], config.tables["rides"]
    assert trips.hoodie_conf == {"hoodie.metadata.enable": "true", "hoodie.keep.max.commits": "40"}
    assert trips.spark_conn_id == "spark_cluster" and rides.spark_conn_id == "spark_local"  # a table's own wins
    assert trips.spark_conf == {"spark.executor.cores": "2"}
    assert trips.services.runs == ("clustering", "clean")  # `clustering:` with nothing after it turns it on
    assert trips.services.clean == {"hoodie.cleaner.commits.retained": "10"}
    assert (trips.zookeeper_conn_id, trips.restore.wait_timeout_minutes) == ("hudi_zookeeper_default", 60)


def test_each_dag_section_may_take_its_own_spark_connection_and_settings():
    trips = parse_tables_config({"tables": {"trips": {
        **TABLE, "spark_conf": {"spark.executor.cores": 2},
        "ingest": {"source_path": "/in", "spark_conn_id": "spark_ingest"},
        "backfill": {"spark_conn_id": " ", "spark_conf": {"spark.cores.max": 1}},
        "services": {"clean": {}, "spark_conn_id": "spark_services"}}}}).tables["trips"]
    assert (trips.ingest.spark_conn_id, trips.ingest.spark_conf) == ("spark_ingest", {})
    assert (trips.backfill.spark_conn_id, trips.backfill.spark_conf) == (None, {"spark.cores.max": "1"})  # blank: none
    assert trips.services.spark_conn_id == "spark_services"
    assert trips.spark_conf == {"spark.executor.cores": "2"}  # the table's stay for its other DAGs


def test_a_table_or_one_of_its_dags_may_defer_its_tasks_while_yarn_runs_their_jobs():
    from hudi_ops.airflow.dag_factory.factory import dags_from_config

    config = {"tables": {"trips": {**TABLE, "deferrable": True, "ingest": {"source_path": "/in", "deferrable": False},
                                   "backfill": {}, "services": {"clean": {}}}}}
    trips = parse_tables_config(config).tables["trips"]
    assert (trips.deferrable, trips.ingest.deferrable, trips.backfill.deferrable) == (True, False, None)
    dags = dags_from_config(config)
    deferrable = {dag_id: {t.task_id: t.deferrable for t in dag.tasks if hasattr(t, "deferrable")}
                  for dag_id, dag in dags.items()}
    assert set(deferrable["hudi_ingest__trips"].values()) == {False}  # its own
    assert set(deferrable["hudi_backfill__trips"].values()) == {True}  # the table's
    assert set(deferrable["hudi_services__trips"].values()) == {True}
    assert parse_tables_config({"tables": {"trips": TABLE}}).tables["trips"].deferrable is False


@pytest.mark.parametrize("section", ["ingest", "backfill", "services", "restore"])
def test_a_dag_section_in_the_defaults_is_refused_rather_than_given_to_every_table(section):
    with pytest.raises(ConfigError, match=f"`defaults` in tables.yaml holds {section}: a DAG's section belongs to "
                                          "its table"):
        parse_tables_config({"defaults": {section: {"spark_conf": {"spark.cores.max": "1"}}},
                             "tables": {"trips": TABLE}}, "tables.yaml")


@pytest.mark.parametrize(("table", "message"), [
    ({"base_path": "/t"}, "table 'trips' in tables.yaml: `record_key` is missing; add it"),
    ({**TABLE, "ingest": {"source_path": "/in", "source_format": "orc"}},
     "`ingest.source_format`: Input should be 'parquet', 'json' or 'csv' (given: 'orc')"),
    ({**TABLE, "ingest": {"source_format": "json"}}, "`ingest`: `source_path` is required: the landing folder"),
    ({**TABLE, "ingest": {"source_kind": "kafka"}}, "`ingest`: `source_kind: kafka` needs `kafka_topic`"),
    ({**TABLE, "ingest": {"source_kind": "kafka", "kafka_topic": "t", "source_path": "/in"}},
     "a Kafka ingest does not read"),
    ({**TABLE, "ingest": {"source_kind": "kafka", "kafka_topic": "t", "kafka_value_format": "avro"}},
     "`kafka_value_format: avro` needs `kafka_value_schema`, the path of the values' Avro schema"),
    ({**TABLE, "ingest": {"source_kind": "kafka", "kafka_topic": "t", "kafka_value_schema": "/s/trip.avsc"}},
     "`kafka_value_schema` is the schema of Avro values: give `kafka_value_format: avro`"),
    ({**TABLE, "ingest": {"source_kind": "debezium", "kafka_topic": "t", "kafka_value_format": "avro",
                          "kafka_value_schema": "/s/trip.avsc"}}, "is for `source_kind: kafka`"),
    ({**TABLE, "ingest": {"source_kind": "kafka", "kafka_topic": "t", "kafka_value_format": "protobuf"}},
     "`ingest.kafka_value_format`: Input should be 'json', 'avro' or 'confluent_avro'"),
    ({**TABLE, "ingest": {"source_kind": "mqtt"}},
     "`ingest.source_kind`: Input should be 'files', 'kafka', 'debezium' or 'hudi'"),
    ({**TABLE, "backfill": {"operation": "MERGE"}}, "`backfill.operation`: Input should be 'UPSERT'"),
    ({**TABLE, "backfill": {"max_active_runs": 0}}, "`backfill.max_active_runs`: Input should be greater than 0"),
    ({**TABLE, "table_type": "cow"}, "`table_type`: Input should be 'COPY_ON_WRITE' or 'MERGE_ON_READ'"),
    ({**TABLE, "recordkey": "id"}, "unknown key `recordkey`; every key is in docs/tables-config.md"),
    ({**TABLE, "services": {"spark_conf": {"spark.cores.max": "1"}}},
     "`services.spark_conn_id` and `.spark_conf` set the services DAG's Spark, and that DAG runs only with one of"),
    ({**TABLE, "spark_conn_id": ""}, "`spark_conn_id`: String should have at least 1 character"),
    ({**TABLE, "restore": {"wait_timeout_minutes": -5}},
     "`restore.wait_timeout_minutes`: Input should be greater than 0 (given: -5)"),
    ({**TABLE, "services": {"archive": {}}}, "`services.archive` sets the services DAG's archive task"),
    ({**TABLE, "hoodie_conf": {"hoodie.write.concurrency.mode": "non_blocking_concurrency_control"}},
     "hoodie.write.concurrency.mode=NON_BLOCKING_CONCURRENCY_CONTROL needs `table_type: MERGE_ON_READ`, "
     "hoodie.index.type=BUCKET with hoodie.index.bucket.engine=SIMPLE (the default)"),
    ({**TABLE, "table_type": "MERGE_ON_READ", "services": {"clustering": {}}, "zookeeper_conn_id": None,
      "hoodie_conf": {"hoodie.write.concurrency.mode": "NON_BLOCKING_CONCURRENCY_CONTROL",
                      "hoodie.index.type": "BUCKET"}},
     "needs a zookeeper_conn_id (its writers still take the lock to commit), no clustering service"),
    ({**TABLE, "hoodie_conf": {"hoodie.write.concurrency.mode": "SINGLE_WRITER"}},
     "hoodie.write.concurrency.mode=SINGLE_WRITER cannot share a table's lock with other writers"),
    ({**TABLE, "table_type": "COPY_ON_WRITE", "validators": {"single_result": ["select count(*) from trips#0"]}},
     "validators.single_result: 'select count(*) from trips#0' does not read <TABLE_NAME>"),
    ({**TABLE, "table_type": "COPY_ON_WRITE", "validators": {"single_result": ["select 1 from <TABLE_NAME>"]}},
     "needs one '#' between the query and the value it must return"),
    ({**TABLE, "table_type": "COPY_ON_WRITE", "validators": {"equality": ["select 1 from <TABLE_NAME>; drop x"]}},
     "holds ';', which Hudi splits queries at"),
    ({**TABLE, "table_type": "MERGE_ON_READ", "validators": {"equality": ["select count(*) from <TABLE_NAME>"]}},
     "`validators` need `table_type: COPY_ON_WRITE`"),
    ({**TABLE, "catalog": {"database": "my-db"}}, "`catalog.database`: String should match pattern"),
])
def test_a_bad_entry_names_the_table_the_key_and_the_fix(table, message):
    config = parse_tables_config({"tables": {"trips": table, "rides": TABLE}}, "tables.yaml")
    assert list(config.tables) == ["rides"]  # the other table stays
    assert config.refused["trips"].startswith("table 'trips' in tables.yaml: ")
    assert message in config.refused["trips"]
    with pytest.raises(ConfigError, match=re.escape(message)):
        config.raise_refused()


@pytest.mark.parametrize(("key", "schedule"), [
    ("ingest", "every 10 min"), ("ingest", "*/10 * * *"), ("ingest", "@daily "), ("ingest", "0 0 31 2 *"),
    ("services", "@once"), ("services", "@continuous"), ("services", "61 * * * *"),
])
def test_a_schedule_airflow_would_refuse_is_refused_naming_the_table_and_the_key(key, schedule):
    section = {"source_path": "/in"} if key == "ingest" else {"clean": {}}
    config = parse_tables_config({"tables": {"trips": {**TABLE, key: {**section, "schedule": schedule}}}}, "t.yaml")
    reason = config.refused["trips"]
    assert reason.startswith(f"table 'trips' in t.yaml: `{key}.schedule`: {schedule!r} is not a schedule Airflow "
                             "takes (")
    assert "give a cron expression such as '*/10 * * * *' or one of @hourly, @daily" in reason


@pytest.mark.parametrize("schedule", ["*/10 * * * *", "@hourly", "@once", "@continuous", "0 0 29 2 *", None])
def test_an_ingest_takes_what_airflow_takes_as_a_schedule(schedule):
    ingest = {"source_path": "/in", "schedule": schedule}
    config = parse_tables_config({"tables": {"trips": {**TABLE, "ingest": ingest}}})
    assert config.tables["trips"].ingest.schedule == schedule and not config.refused


NO_LOCK_FIX = "give the table a zookeeper_conn_id (a hudi_zookeeper connection) so that they take its lock"


@pytest.mark.parametrize(("sections", "message"), [
    ({"ingest": {"source_path": "/in"}, "backfill": {"max_active_runs": 1}},
     "`zookeeper_conn_id` is null (no lock), yet its ingest DAG and its backfill DAG write the table at once; "),
    ({"ingest": {"source_path": "/in"}, "services": {"clean": {}}},
     "yet its ingest DAG and its services DAG (each service a job of its own) write the table at once; "),
    ({"backfill": {"max_active_runs": 1}, "services": {"compaction": {}}},
     "yet its backfill DAG and its services DAG (each service a job of its own) write the table at once; "),
    ({"backfill": {}}, "yet `backfill.max_active_runs` is 4: so many backfill runs are so many writers; "),
])
def test_several_writers_without_a_lock_are_refused_naming_the_fix(sections, message):
    table = {**TABLE, "table_type": "MERGE_ON_READ", "zookeeper_conn_id": None, **sections}
    reason = parse_tables_config({"tables": {"trips": table}}).refused["trips"]
    assert message in reason and NO_LOCK_FIX in reason


@pytest.mark.parametrize("sections", [
    {"ingest": {"source_path": "/in"}}, {"backfill": {"max_active_runs": 1}}, {"services": {"clean": {}}},
    {"ingest": {"source_path": "/in"}, "restore": {}},  # a restore waits for the writers to stop
])
def test_one_writer_needs_no_lock(sections):
    config = parse_tables_config({"tables": {"trips": {**TABLE, "zookeeper_conn_id": None, **sections}}})
    assert not config.refused and config.tables["trips"].zookeeper_conn_id is None


def test_a_table_whose_name_cannot_name_its_dags_is_refused():
    config = parse_tables_config({"tables": {"my trips": TABLE, "trips.v2": TABLE}}, "tables.yaml")
    assert list(config.tables) == ["trips.v2"]
    assert config.refused["my trips"] == ("table 'my trips' in tables.yaml: its name names its DAGs, and Airflow "
                                          "takes letters, digits, '_', '.' and '-' only, up to 235 of them here; "
                                          "rename the table (its `base_path` stays)")


def test_a_config_without_tables_or_with_stray_keys_says_so(tmp_path):
    with pytest.raises(ConfigError, match="has no `tables:` mapping"):
        parse_tables_config({"defaults": {}}, "tables.yaml")
    with pytest.raises(ConfigError, match=re.escape("unknown top-level key(s) table")):
        parse_tables_config({"tables": {"trips": TABLE}, "table": {}}, "tables.yaml")
    with pytest.raises(ConfigError, match="cannot read the tables config"):
        read_tables_config(tmp_path / "missing.yaml")


def test_what_users_write_loosely_means_what_they_meant():
    config = parse_tables_config({"tables": {"trips": {
        **TABLE, "table_type": "merge_on_read", "partition_field": "", "hoodie_conf": None, "restore": None,
        "ingest": {"source_path": "/in", "operation": "upsert"}, "backfill": {"operation": " bulk_insert "}}}})
    trips = config.tables["trips"]
    assert (trips.table_type, trips.ingest.operation, trips.backfill.operation) == \
        ("MERGE_ON_READ", "UPSERT", "BULK_INSERT")  # Hudi's enums in any case, as the jobs take them
    assert trips.partition_field is None  # "" is no partition field, not an empty one
    assert trips.hoodie_conf == {} and trips.restore.wait_timeout_minutes == 60  # an empty section is the default


def test_the_config_reference_names_every_key_of_the_model_and_no_other():
    from pydantic import BaseModel

    from hudi_ops.airflow.dag_factory.tables_config import TableConfig

    def keys(model: type[BaseModel], prefix: str = "") -> set[str]:
        out = set()
        for name, info in model.model_fields.items():
            section = next((t for t in getattr(info.annotation, "__args__", (info.annotation,))
                            if isinstance(t, type) and issubclass(t, BaseModel)), None)
            out |= keys(section, f"{prefix}{name}.") if section else {prefix + name}
        return out

    reference = (REPO / "docs" / "tables-config.md").read_text()
    table = reference.split("| key | what it is | when left out |")[1].split("\n\n")[0]
    documented = set()
    for row in table.splitlines()[2:]:
        full = ""
        for name in re.findall(r"`([\w.]+)`", row.split("|")[1]):
            full = full.rsplit(".", 1)[0] + name if name.startswith(".") else name
            documented.add(full)
    # services.compaction/.clustering/.clean/.archive are option maps: the model's keys, the reference's rows
    assert documented == keys(TableConfig)


GROUPED = {**TABLE, "table_type": "MERGE_ON_READ", "services": {"group": "fleet", "compaction": {}}}


def test_a_services_group_has_a_budget_a_policy_and_a_tick_and_its_tables_name_it():
    config = parse_tables_config({"services_groups": {"fleet": {"budget": 3, "policy": "balanced"}, "spare": None},
                                  "tables": {"trips": {**GROUPED, "services": {**GROUPED["services"], "priority": 2}},
                                             "rides": TABLE}}, "tables.yaml")
    fleet, spare = config.services_groups["fleet"], config.services_groups["spare"]
    assert (fleet.budget, fleet.policy, fleet.schedule) == (3, "balanced", "*/5 * * * *")
    assert (spare.budget, spare.policy) == (2, "need")  # the defaults
    assert list(config.group_members("fleet")) == ["trips"] and config.group_members("spare") == {}
    assert (config.tables["trips"].services.priority, config.tables["trips"].services.quota) == (2.0, 1.0)


@pytest.mark.parametrize(("services", "message"), [
    ({"group": "elsewhere", "compaction": {}}, "`services.group` 'elsewhere' is not a key of `services_groups`; "
                                               "add it there (fleet), or drop `group`"),
    ({"priority": 3, "compaction": {}}, "`services.priority` and `.quota` rank the table in its services group; "
                                        "add `services.group`"),
    ({"group": "fleet"}, "`services.group` names where the table's services run, and it names none"),
    ({"group": "fleet", "compaction": {}, "quota": 0}, "`services.quota`: Input should be greater than 0"),
])
def test_a_table_that_cannot_join_its_group_is_refused_alone(services, message):
    config = parse_tables_config({"services_groups": {"fleet": {}},
                                  "tables": {"trips": {**GROUPED, "services": services}, "rides": GROUPED}},
                                 "tables.yaml")
    assert list(config.tables) == ["rides"] and message in config.refused["trips"]


@pytest.mark.parametrize(("group", "message"), [
    ({"budget": 0}, "services group 'fleet' in tables.yaml: `budget`: Input should be greater than 0"),
    ({"policy": "fifo"}, "`policy`: Input should be 'cron', 'balanced', 'quota' or 'need'"),
    ({"schedule": "every minute"}, "`schedule`: 'every minute' is not a schedule Airflow takes"),
    ({"pool": "x"}, "unknown key `pool`"),
])
def test_a_bad_services_group_fails_the_file_naming_the_group_and_the_key(group, message):
    with pytest.raises(ConfigError, match=re.escape(message)):
        parse_tables_config({"services_groups": {"fleet": group}, "tables": {"trips": GROUPED}}, "tables.yaml")
