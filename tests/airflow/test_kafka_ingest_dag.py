"""A Kafka-fed ingest DAG with real Airflow, a real broker and spark-submit: the Kafka provider's
connection names the brokers (its secrets never reach a command line or a log), a run commits the new
messages, and an idle tick is skipped without starting Spark."""

from __future__ import annotations

import json
import shutil
import uuid
from pathlib import Path

import pytest
from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic

from tests.airflow.conftest import SPARK_CONF, dag_in_folder
from tests.tables import Model, read_hudi_rs, trips

pytestmark = pytest.mark.spark  # spark-submit jobs of its own

DAG_ID = "hudi_ops_test_kafka_ingest"
DAG_FILE = f'''
from airflow.sdk import DAG, Param

from hudi_ops.airflow.operators.spark_jobs import HudiIngestOperator

with DAG("{DAG_ID}", schedule=None,
         params={{"base_path": Param(""), "topic": Param(""), "driver_memory": Param("1g")}}):
    HudiIngestOperator(
        task_id="ingest", base_path="{{{{ params.base_path }}}}", source_kind="kafka",
        kafka_topic="{{{{ params.topic }}}}", kafka_conn_id="kafka_test", table_name="trips",
        table_type="MERGE_ON_READ",
        record_key_field="trip_id", partition_path_field="dt", ordering_field="ts",
        conf={{**{SPARK_CONF!r}, "spark.driver.memory": "{{{{ params.driver_memory }}}}"}}, retries=0,
    )
'''
#: a login the broker (PLAINTEXT) never asks for: it must still never show in a command line or a log
SECRET = f"not-shown-{uuid.uuid4().hex[:8]}"


@pytest.fixture
def kafka_dag(airflow_db, kafka, zookeeper_connection, monkeypatch):
    monkeypatch.setenv("AIRFLOW_CONN_KAFKA_TEST", json.dumps({"conn_type": "kafka", "extra": {
        "bootstrap.servers": kafka.bootstrap_servers, "group.id": "airflow", "sasl.mechanism": "PLAIN",
        "sasl.username": "reader", "sasl.password": SECRET}}))
    with dag_in_folder(DAG_ID, DAG_FILE) as dag:
        yield dag


def _task(run):
    (ti,) = [t for t in run.get_task_instances() if t.task_id == "ingest"]
    return ti


def test_a_kafka_ingest_dag_commits_new_messages_and_skips_an_idle_tick_without_spark(kafka_dag, kafka, tmp_path,
                                                                                      capfd):
    topic, base = f"trips-{uuid.uuid4().hex[:8]}", tmp_path / "trips"
    admin = AdminClient({"bootstrap.servers": kafka.bootstrap_servers})
    admin.create_topics([NewTopic(topic, num_partitions=2, replication_factor=1)])[topic].result(30)
    rows = trips("2026-11-20", range(7), ts=1)
    producer = Producer({"bootstrap.servers": kafka.bootstrap_servers})
    for row in rows:
        producer.produce(topic, key=row["trip_id"].encode(), value=json.dumps(row).encode())
    assert producer.flush(30) == 0
    del producer

    run = kafka_dag.test(run_conf={"base_path": str(base), "topic": topic})
    log = "".join(capfd.readouterr())
    assert run.state == "success", log[-3000:]
    assert read_hudi_rs(base) == Model().upsert(rows).expected()
    assert "Spark-Submit cmd" in log and SECRET not in log

    # a Spark setting spark-submit refuses at once: a task that started spark-submit would fail
    idle = kafka_dag.test(run_conf={"base_path": str(base), "topic": topic, "driver_memory": "lots"})
    log = "".join(capfd.readouterr())
    assert idle.state == "success" and _task(idle).state == "skipped", log[-3000:]
    assert f"nothing to ingest: 0 new message(s) in topic {topic}" in log and "Spark-Submit cmd" not in log


def test_a_catch_up_runs_its_driver_for_throughput_and_a_few_messages_for_a_quick_start(kafka_dag, kafka, tmp_path,
                                                                                        monkeypatch):
    """What the task found before spark-submit decides the driver's JVM: LARGE_EVENTS messages or more (3
    here) get the optimising compiler and the parallel collector, fewer the small-job flags."""
    from hudi_ops.airflow.operators.spark_jobs import HudiIngestOperator
    from hudi_ops.spark import driver_jvm

    monkeypatch.setattr(driver_jvm, "LARGE_EVENTS", 3)
    topic = f"trips-{uuid.uuid4().hex[:8]}"
    admin = AdminClient({"bootstrap.servers": kafka.bootstrap_servers})  # alive until its answer came
    admin.create_topics([NewTopic(topic, num_partitions=1, replication_factor=1)])[topic].result(30)
    producer = Producer({"bootstrap.servers": kafka.bootstrap_servers})

    def driver_options():
        op = HudiIngestOperator(task_id="ingest", base_path=str(tmp_path / "trips"), table_name="trips",
                                source_kind="kafka", kafka_topic=topic, kafka_conn_id="kafka_test",
                                record_key_field="trip_id", zookeeper_conn_id=None)
        op.prepare({})
        shutil.rmtree(op._folder)
        return op.conf[driver_jvm.DRIVER_JAVA_OPTIONS]

    for row in trips("2026-11-20", range(2), ts=1):
        producer.produce(topic, value=json.dumps(row).encode())
    assert producer.flush(30) == 0
    assert driver_options() == driver_jvm.driver_java_options()  # 2 messages: a quick start
    for row in trips("2026-11-21", range(2), ts=1):
        producer.produce(topic, value=json.dumps(row).encode())
    assert producer.flush(30) == 0
    large = driver_options()
    assert large == driver_jvm.driver_java_options(large=True) and "-XX:+UseParallelGC" in large
    assert "TieredStopAtLevel" not in large


def test_an_avro_ingest_in_cluster_mode_names_its_schema_file_for_the_driver_to_read(kafka_dag, kafka, tmp_path,
                                                                                      monkeypatch):
    """The schema file is only named before spark-submit (the driver reads it where it runs); an Avro ingest
    without one fails at once, not retried."""
    from airflow.sdk.exceptions import AirflowFailException

    from hudi_ops.airflow.operators.spark_jobs import HudiIngestOperator
    from hudi_ops.options.keys import StreamerConfig
    from hudi_ops.spark.cluster_mode import PROPS_NAME

    monkeypatch.setenv("AIRFLOW_CONN_SPARK_CLUSTER", json.dumps(
        {"conn_type": "spark", "host": "yarn", "extra": {"deploy-mode": "cluster"}}))
    topic = f"trips-{uuid.uuid4().hex[:8]}"
    admin = AdminClient({"bootstrap.servers": kafka.bootstrap_servers})  # alive until its answer came
    admin.create_topics([NewTopic(topic, num_partitions=1, replication_factor=1)])[topic].result(30)
    producer = Producer({"bootstrap.servers": kafka.bootstrap_servers})
    producer.produce(topic, value=b"avro bytes")
    assert producer.flush(30) == 0
    schema = "hdfs:///schemas/trip.avsc"  # not readable here: the driver reads it

    def operator(**conf):
        return HudiIngestOperator(task_id="ingest", conn_id="spark_cluster", base_path=str(tmp_path / "trips"),
                                  table_name="trips", source_kind="kafka", kafka_topic=topic,
                                  kafka_conn_id="kafka_test", kafka_value_format="avro", record_key_field="trip_id",
                                  zookeeper_conn_id=None, hoodie_conf=conf)

    op = operator(**{StreamerConfig.SOURCE_SCHEMA_FILE.name: schema})
    op.prepare({})
    props = Path(op.files.split(",")[0])
    assert props.name == PROPS_NAME and f"{StreamerConfig.SOURCE_SCHEMA_FILE.name}={schema}" in props.read_text()
    assert op.application_args[op.application_args.index("--kafka-value-format") + 1] == "avro"
    shutil.rmtree(op._folder)
    with pytest.raises(AirflowFailException, match=StreamerConfig.SOURCE_SCHEMA_FILE.name):
        operator().prepare({})
