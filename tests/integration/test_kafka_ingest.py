"""A Kafka-fed table (`ingest --source-kind kafka`) against a real broker: runs read exactly the messages
their checkpoint has not taken, the checkpoint rides in HoodieStreamer's key and format (read back by
Hudi's own checkpoint classes), an idle run starts no Spark, a retry of a killed job writes each key
once, and lost or malformed messages fail the run naming them (or, with Hudi's error table on, land there
with their place, raw value and reason while the rest commit). Tables are judged by hudi-rs and Spark's
Hudi reader against a plain model of the messages produced."""

from __future__ import annotations

import base64
import io
import json
import uuid

import fastavro
import pytest
from confluent_kafka import OFFSET_BEGINNING, Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from hudi_ops.format.meta_client import MetaClient
from hudi_ops.job_specs import BackfillSpec, CompactSpec, IngestSpec
from hudi_ops.options.keys import StreamerConfig
from hudi_ops.sources.error_table import COLUMNS as ERROR_COLUMNS
from hudi_ops.sources.error_table import ERRORS_KEY, NOT_A_ROW
from hudi_ops.sources.kafka import (
    FAIL_ON_DATA_LOSS,
    STREAMER_CHECKPOINT_KEY_V2,
    KafkaOffsets,
    kafka_checkpoint,
)
from hudi_ops.spark.__main__ import main
from hudi_ops.spark.kafka_connector import kafka_jars
from tests.integration.lock_options import await_stopped_writes_expired, occ_options
from tests.integration.processes import Job, waiting_to_commit
from tests.integration.test_spark_jobs import NoSpark
from tests.tables import Model, job_result, read_hudi_rs, read_spark, trips, write_source

pytestmark = pytest.mark.spark
PARTITIONS = 3
SCHEMA_FILE = StreamerConfig.SOURCE_SCHEMA_FILE.name
#: the trips' Avro schema, as a producer's .avsc would hold it
TRIP_SCHEMA = {"type": "record", "name": "Trip", "namespace": "example.trips", "fields": [
    {"name": "trip_id", "type": "string"}, {"name": "dt", "type": "string"}, {"name": "ts", "type": "long"},
    {"name": "fare", "type": "double"}]}


def avro_value(row, *, confluent: bool) -> bytes:
    """A row as Avro binary, written by fastavro (not Spark); with Confluent's framing: a zero byte and a
    schema id first, as its KafkaAvroSerializer writes."""
    out = io.BytesIO(b"\0" + (42).to_bytes(4, "big") if confluent else b"")
    out.seek(0, io.SEEK_END)
    fastavro.schemaless_writer(out, fastavro.parse_schema(TRIP_SCHEMA), row)
    return out.getvalue()


class Topic:
    """A fresh topic of 3 partitions, what was produced to it, and ingests of it into a table."""

    def __init__(self, kafka, tmp_path, spark, capsys, partitions: int = PARTITIONS):
        self.kafka, self.spark, self.capsys = kafka, spark, capsys
        self.name = f"trips-{uuid.uuid4().hex[:8]}"
        self.table = tmp_path / "trips"
        admin = AdminClient({"bootstrap.servers": kafka.bootstrap_servers})
        made = admin.create_topics([NewTopic(self.name, num_partitions=partitions, replication_factor=1)])
        made[self.name].result(30)
        self.model = Model()

    def produce(self, rows, *, raw: list[bytes] | None = None, encode=lambda row: json.dumps(row).encode()) -> None:
        """Rows as values (JSON by default) keyed by their trip, so a key's changes stay in one partition, in
        order."""
        producer = Producer({"bootstrap.servers": self.kafka.bootstrap_servers})  # gone with the call
        for row in rows:
            producer.produce(self.name, key=row["trip_id"].encode(), value=encode(row))
        for value in raw or ():
            producer.produce(self.name, key=b"bad", value=value)
        assert producer.flush(30) == 0
        self.model.upsert(rows)

    def ingest(self, run: str = "", **fields) -> list[str]:
        return IngestSpec(base_path=str(self.table), table_name="trips", table_type="MERGE_ON_READ",
                          record_key_field="trip_id", partition_path_field="dt", ordering_field="ts",
                          source_kind="kafka", kafka_topic=self.name, run_id=run or None,
                          hoodie_conf={"kafka.bootstrap.servers": self.kafka.bootstrap_servers,
                                       **fields.pop("hoodie_conf", {})}, **fields).to_argv()

    def run(self, argv, spark=None) -> tuple[int, dict]:
        code = main(argv, spark=spark or self.spark)
        return code, job_result(self.capsys.readouterr().out)

    def read(self):
        rows = read_hudi_rs(self.table)
        assert rows == read_spark(self.spark, self.table), "hudi-rs and Spark's Hudi reader disagree"
        return rows

    def held_rows(self) -> list[dict]:
        """Every message the topic still holds, read back with a plain consumer."""
        consumer = Consumer({"bootstrap.servers": self.kafka.bootstrap_servers, "group.id": "test-reader",
                             "enable.auto.commit": False})
        try:
            from hudi_ops.sources.kafka import watermarks

            earliest, ends = watermarks(self.name, {"bootstrap.servers": self.kafka.bootstrap_servers})
            consumer.assign([TopicPartition(self.name, p, OFFSET_BEGINNING) for p in ends])
            rows, wanted = [], {p for p in ends if earliest[p] < ends[p]}
            while wanted:
                message = consumer.poll(10)
                assert message is not None and message.error() is None, message and message.error()
                rows.append(json.loads(message.value()))
                if message.offset() + 1 >= ends[message.partition()]:
                    wanted.discard(message.partition())
            return rows
        finally:
            consumer.close()

    def held_values(self) -> dict[bytes, tuple[int, int]]:
        """Each value the topic holds (as bytes) at its (partition, offset), read back with a plain consumer."""
        consumer = Consumer({"bootstrap.servers": self.kafka.bootstrap_servers, "group.id": "test-raw-reader",
                             "enable.auto.commit": False})
        try:
            ends = self.end_offsets()
            consumer.assign([TopicPartition(self.name, p, OFFSET_BEGINNING) for p in ends])
            held, wanted = {}, {p for p in ends if ends[p]}
            while wanted:
                message = consumer.poll(10)
                assert message is not None and message.error() is None, message and message.error()
                held[message.value()] = (message.partition(), message.offset())
                if message.offset() + 1 >= ends[message.partition()]:
                    wanted.discard(message.partition())
            return held
        finally:
            consumer.close()

    def end_offsets(self) -> dict[int, int]:
        from hudi_ops.sources.kafka import watermarks

        return watermarks(self.name, {"bootstrap.servers": self.kafka.bootstrap_servers})[1]


@pytest.fixture
def topic(kafka, tmp_path, spark, capsys):
    return Topic(kafka, tmp_path, spark, capsys)


def last_commit_extra(table) -> dict[str, str]:
    timeline = MetaClient.open(table).timeline()
    _, metadata = next(iter(timeline.newest_writes()))
    return metadata.extra_metadata


def hudi_checkpoint(spark, table) -> str:
    """The checkpoint Hudi's own classes read from the table's newest commit with one, as HoodieStreamer
    resumes from it."""
    jvm = spark.sparkContext._jvm
    meta = (jvm.org.apache.hudi.common.table.HoodieTableMetaClient.builder()
            .setConf(jvm.org.apache.hudi.hadoop.fs.HadoopFSUtils.getStorageConf(
                spark.sparkContext._jsc.hadoopConfiguration()))
            .setBasePath(str(table)).build())
    timeline = meta.getActiveTimeline().getCommitsTimeline().filterCompletedInstants()
    instant = timeline.lastInstant().get()
    metadata = timeline.readCommitMetadata(instant)
    checkpoint = jvm.org.apache.hudi.common.table.checkpoint.CheckpointUtils.getCheckpoint(metadata)
    assert checkpoint.getClass().getSimpleName() == "StreamerCheckpointV2"
    return checkpoint.getCheckpointKey()


def test_three_runs_read_what_was_produced_between_them_and_an_idle_run_starts_no_spark(topic, spark):
    for n in range(3):
        topic.produce(trips("2026-11-2" + str(n), range(10), ts=n) + trips("2026-11-20", range(n), ts=10 + n))
        code, result = topic.run(topic.ingest(f"run-{n}"))
        assert code == 0 and result["outcome"] == "committed", result
        assert topic.read() == topic.model.expected()
    end = topic.end_offsets()
    expected = str(KafkaOffsets.of(topic.name, end))
    assert last_commit_extra(topic.table)[STREAMER_CHECKPOINT_KEY_V2] == expected
    assert hudi_checkpoint(spark, topic.table) == expected  # HoodieStreamer would resume there

    code, result = topic.run(topic.ingest("run-3"), spark=NoSpark())  # nothing new: no session started
    assert code == 0 and result["instant"] is None and "0 new message(s)" in result["reason"], result


def test_a_run_reads_at_most_its_bound_per_commit(topic):
    topic.produce(trips("2026-11-20", range(25), ts=1))
    code, result = topic.run(topic.ingest("catch-up", source_limit_events=10))
    assert code == 0 and result["commits"] == 3 and result["inserts"] == 25, result
    assert topic.read() == topic.model.expected()


def test_a_retry_of_a_run_that_committed_finds_it_committed(topic):
    topic.produce(trips("2026-11-20", range(5), ts=1))
    code, first = topic.run(topic.ingest("run-7"))
    assert code == 0 and first["outcome"] == "committed", first
    code, again = topic.run(topic.ingest("run-7"), spark=NoSpark())
    assert code == 0 and again["outcome"] == "already committed" and again["instant"] == first["instant"], again
    assert topic.read() == topic.model.expected()


def test_a_malformed_message_fails_the_run_naming_its_offset_and_nothing_is_written(topic):
    topic.produce(trips("2026-11-20", range(4), ts=1))
    assert topic.run(topic.ingest("ok"))[0] == 0
    before = topic.read()
    topic.produce([], raw=[b"{not json"])
    code, result = topic.run(topic.ingest("bad"))
    assert code == 2 and result["error"] == "InvalidInputError", result
    assert f"topic {topic.name} partition" in result["message"] and "offset" in result["message"], result
    assert topic.read() == before


def test_a_job_killed_before_its_commit_is_retried_and_writes_each_key_once(topic, zookeeper, tmp_path):
    """Killed after its files are written, while it waits for the table's lock to commit: nothing of it
    is visible, and Airflow's retry reads the same range again and commits it once."""
    options = occ_options(zookeeper.url)
    topic.produce(trips("2026-11-20", range(4), ts=1))
    assert topic.run(topic.ingest("seed", hoodie_conf=options))[0] == 0
    seeded = topic.read()
    batch = trips("2026-11-21", range(6), ts=2)
    topic.produce(batch)
    before = {i.requested_time for i in MetaClient.open(topic.table).timeline().completed}
    job = Job.start(topic.ingest("run-k", hoodie_conf=options), tmp_path / "killed.log", jars=kafka_jars())
    try:
        with waiting_to_commit(topic.table, before, job, options):  # its files are written, it waits to commit
            job.kill()
    finally:
        if job.process.poll() is None:
            job.kill()
    assert topic.read() == seeded

    await_stopped_writes_expired(topic.table)
    code, result = topic.run(topic.ingest("run-k", hoodie_conf=options))  # Airflow's retry
    assert code == 0 and result["outcome"] == "committed" and result["inserts"] == len(batch), result
    assert topic.read() == topic.model.expected()  # each key once
    assert last_commit_extra(topic.table)[STREAMER_CHECKPOINT_KEY_V2] == str(KafkaOffsets.of(topic.name,
                                                                                             topic.end_offsets()))


def test_offsets_the_topic_no_longer_holds_fail_the_run_naming_them_and_a_skip_is_recorded(topic):
    topic.produce(trips("2026-11-20", range(3), ts=1))
    assert topic.run(topic.ingest("first"))[0] == 0
    before = topic.read()
    topic.produce(trips("2026-11-21", range(30), ts=2))
    ends = topic.end_offsets()
    lost = {p: ends[p] - 1 for p in ends if ends[p] > 1}  # retention passed the checkpoint: all but the last
    admin = AdminClient({"bootstrap.servers": topic.kafka.bootstrap_servers})
    for future in admin.delete_records([TopicPartition(topic.name, p, o) for p, o in lost.items()]).values():
        future.result(30)

    code, result = topic.run(topic.ingest("after-outage"), spark=NoSpark())  # found before Spark starts
    assert code == 2 and result["error"] == "InvalidInputError", result
    p = min(lost)
    assert f"partition {p} offsets" in result["message"] and f"to {lost[p] - 1}" in result["message"], result
    assert "enable.failOnDataLoss=false" in result["message"] and topic.read() == before

    code, result = topic.run(topic.ingest("skip", hoodie_conf={FAIL_ON_DATA_LOSS: "false"}))
    assert code == 0 and result["outcome"] == "committed", result
    skipped = last_commit_extra(topic.table)["_hudi_ops.kafka.skipped"]
    assert skipped.startswith(topic.name + ",") and f"{p}:" in skipped
    held = topic.held_rows()  # what the topic still holds: the first batch's messages went with the rest
    assert 0 < len(held) < 33
    assert topic.read() == Model().upsert(trips("2026-11-20", range(3), ts=1)).upsert(held).expected()


def test_each_topic_keeps_its_checkpoint_beside_a_backfill_at_once_a_compaction_and_a_second_topic(
        topic, kafka, tmp_path, spark, capsys, zookeeper):
    options = occ_options(zookeeper.url)
    other = Topic(kafka, tmp_path / "other", spark, capsys, partitions=1)
    other.table, other.model = topic.table, topic.model  # one table, two pipelines
    topic.produce(trips("2026-11-20", range(5), ts=1))
    assert topic.run(topic.ingest("a-1", hoodie_conf=options))[0] == 0
    history = tmp_path / "history"
    old = trips("2026-10-01", range(8), ts=0)
    write_source(history / "dt=2026-10-01" / "part-0.parquet", [{k: v for k, v in r.items() if k != "dt"}
                                                                 for r in old])
    backfill = Job.start(BackfillSpec(base_path=str(topic.table), source_path=str(history), start="2026-10-01",
                                      end="2026-10-01", run_id="bf", hoodie_conf=options).to_argv(),
                         tmp_path / "backfill.log")
    topic.produce(trips("2026-11-21", range(5), ts=2))
    assert topic.run(topic.ingest("a-2", hoodie_conf=options))[0] == 0  # while the backfill writes
    code, done = backfill.finish()
    assert code == 0 and done["outcome"] == "committed", done
    topic.model.upsert(old)
    assert main(CompactSpec(base_path=str(topic.table), mode="scheduleAndExecute", hoodie_conf=options).to_argv(),
                spark=spark) == 0
    capsys.readouterr()
    other.produce(trips("2026-11-22", range(4), ts=3))
    assert other.run(other.ingest("b-1", hoodie_conf=options))[0] == 0

    meta = MetaClient.open(topic.table)
    assert kafka_checkpoint(meta, topic.name).offsets == KafkaOffsets.of(topic.name, topic.end_offsets())
    assert kafka_checkpoint(meta, other.name).offsets == KafkaOffsets.of(other.name, other.end_offsets())
    for t in (topic, other):  # each pipeline finds nothing new, past the other's commits and the services'
        code, idle = t.run(t.ingest("again", hoodie_conf=options), spark=NoSpark())
        assert code == 0 and "0 new message(s)" in idle["reason"], idle
    assert topic.read() == topic.model.expected()


def test_with_hudis_error_table_on_messages_that_cannot_be_read_land_there_and_the_rest_commit(topic, tmp_path):
    """Not JSON, not an object, a value of the wrong type for the table's column: each lands in the error
    table with its topic, partition, offset, raw value and Hudi's reason, the good rows commit with the
    checkpoint past all of them; a batch of bad messages alone commits no row with its checkpoint, so the
    next run has nothing to do."""
    errors = tmp_path / "trips_errors"
    conf = {"hoodie.errortable.enable": "true", "hoodie.errortable.base.path": str(errors)}
    topic.produce(trips("2026-11-20", range(4), ts=1))
    assert topic.run(topic.ingest("first", hoodie_conf=conf))[0] == 0
    assert not errors.exists()  # no error, no error table
    bad = [b"{not json", b"[1, 2]", json.dumps({**trips("2026-11-20", [9], ts=2)[0], "fare": "a lot"}).encode()]
    topic.produce(trips("2026-11-21", range(3), ts=2), raw=bad)
    code, result = topic.run(topic.ingest("second", hoodie_conf=conf))
    assert code == 0 and (result["commits"], result["inserts"], result["error_table_records"]) == (1, 3, 3), result
    assert topic.read() == topic.model.expected()  # the good rows; key 9 of the bad one is not there
    extra = last_commit_extra(topic.table)
    assert extra[ERRORS_KEY] == "3"
    assert extra[STREAMER_CHECKPOINT_KEY_V2] == str(KafkaOffsets.of(topic.name, topic.end_offsets()))
    held = topic.held_values()
    expected = sorted((topic.name, *held[value], value.decode(), NOT_A_ROW, "trips", "second") for value in bad)
    columns = ("topic", "partition", "offset", "value", "reason", "target_table", "ingest_run")
    assert read_hudi_rs(errors, columns) == expected
    assert read_spark(topic.spark, errors, columns) == expected
    assert set(ERROR_COLUMNS) <= set(topic.spark.read.format("hudi").load(str(errors)).columns)
    code, again = topic.run(topic.ingest("second", hoodie_conf=conf))  # the same run once more: nothing new
    assert code == 0 and (again["outcome"], again["instant"]) == ("already committed", result["instant"]), again
    assert read_hudi_rs(errors, columns) == expected
    topic.produce([], raw=[b"still not json"])
    code, alone = topic.run(topic.ingest("third", hoodie_conf=conf))
    assert code == 0 and (alone["commits"], alone["rows"], alone["error_table_records"]) == (1, 0, 1), alone
    assert last_commit_extra(topic.table)[STREAMER_CHECKPOINT_KEY_V2] == str(KafkaOffsets.of(topic.name,
                                                                                             topic.end_offsets()))
    assert len(read_hudi_rs(errors, columns)) == 4 and topic.read() == topic.model.expected()
    code, idle = topic.run(topic.ingest("fourth", hoodie_conf=conf))
    assert code == 0 and idle["instant"] is None, idle  # past them: nothing new


def test_a_partition_added_to_the_topic_is_read_from_its_beginning(topic):
    from confluent_kafka.admin import NewPartitions

    topic.produce(trips("2026-11-20", range(6), ts=1))
    assert topic.run(topic.ingest("before"))[0] == 0
    admin = AdminClient({"bootstrap.servers": topic.kafka.bootstrap_servers})
    admin.create_partitions([NewPartitions(topic.name, PARTITIONS + 2)])[topic.name].result(30)
    rows = trips("2026-11-21", range(40), ts=2)  # keyed by trip: some land in the new partitions
    topic.produce(rows)
    ends = topic.end_offsets()
    assert len(ends) == PARTITIONS + 2 and ends[PARTITIONS] + ends[PARTITIONS + 1] > 0
    code, result = topic.run(topic.ingest("after"))
    assert code == 0 and result["inserts"] == 40, result
    assert last_commit_extra(topic.table)[STREAMER_CHECKPOINT_KEY_V2] == str(KafkaOffsets.of(topic.name, ends))
    assert topic.read() == topic.model.expected()


def test_tombstones_alone_make_no_commit_and_the_next_commit_records_the_offsets_past_them(topic):
    topic.produce(trips("2026-11-20", range(3), ts=1))
    assert topic.run(topic.ingest("rows"))[0] == 0
    producer = Producer({"bootstrap.servers": topic.kafka.bootstrap_servers})
    for i in range(3):  # a compacted topic's deletes: keys with null values
        producer.produce(topic.name, key=f"2026-11-20-{i:04d}".encode(), value=None)
    assert producer.flush(30) == 0
    del producer
    code, result = topic.run(topic.ingest("tombstones"))
    assert code == 0 and result["instant"] is None and "tombstones" in result["reason"], result
    topic.produce(trips("2026-11-21", range(2), ts=2))
    code, result = topic.run(topic.ingest("more"))
    assert code == 0 and result["commits"] == 1 and result["inserts"] == 2, result
    assert last_commit_extra(topic.table)[STREAMER_CHECKPOINT_KEY_V2] == str(KafkaOffsets.of(topic.name,
                                                                                             topic.end_offsets()))
    assert topic.read() == topic.model.expected()


@pytest.mark.parametrize("value_format", ["avro", pytest.param("confluent_avro", marks=pytest.mark.long)])
def test_avro_values_become_rows_and_one_that_does_not_decode_fails_naming_it_or_lands_in_the_error_table(
        topic, tmp_path, value_format):
    schema = tmp_path / "trip.avsc"
    schema.write_text(json.dumps(TRIP_SCHEMA))
    confluent = value_format == "confluent_avro"
    conf = {SCHEMA_FILE: str(schema)}

    def encode(row):
        return avro_value(row, confluent=confluent)

    for n in range(2):  # new trips, then updates of some with a later ts
        topic.produce(trips("2026-11-20", range(n * 3, 8), ts=n + 1) + trips("2026-11-21", range(4), ts=n + 1),
                      encode=encode)
        code, result = topic.run(topic.ingest(f"run-{n}", kafka_value_format=value_format, hoodie_conf=conf))
        assert code == 0 and result["outcome"] == "committed", result
        assert topic.read() == topic.model.expected()
    assert last_commit_extra(topic.table)[STREAMER_CHECKPOINT_KEY_V2] == str(KafkaOffsets.of(topic.name,
                                                                                             topic.end_offsets()))
    before = topic.read()
    truncated = encode(trips("2026-11-22", [1], ts=3)[0])[:-3]
    bad = [b"{not avro", truncated]
    topic.produce([], raw=bad)
    code, failed = topic.run(topic.ingest("bad", kafka_value_format=value_format, hoodie_conf=conf))
    assert code == 2 and failed["error"] == "InvalidInputError", failed
    assert f"topic {topic.name} partition" in failed["message"] and "offset" in failed["message"], failed
    assert f"({len(bad[0])} bytes)" in failed["message"], failed  # the first bad value's own size, not its base64
    assert topic.read() == before  # nothing written, nothing skipped

    errors = tmp_path / "trips_errors"
    on = {**conf, "hoodie.errortable.enable": "true", "hoodie.errortable.base.path": str(errors)}
    good = trips("2026-11-22", range(2), ts=4)
    topic.produce(good, encode=encode)
    code, result = topic.run(topic.ingest("kept", kafka_value_format=value_format, hoodie_conf=on))
    assert code == 0 and (result["inserts"], result["error_table_records"]) == (2, 2), result
    assert topic.read() == topic.model.expected()
    held = topic.held_values()
    columns = ("partition", "offset", "value", "reason")
    expected = sorted((*held[v], base64.b64encode(v).decode(), "AVRO_DESERIALIZATION_FAILURE") for v in bad)
    assert read_hudi_rs(errors, columns) == expected


def test_an_avro_ingest_without_its_schema_or_with_one_that_is_no_record_is_refused_naming_the_fix(topic, tmp_path):
    topic.produce(trips("2026-11-20", range(2), ts=1), encode=lambda row: avro_value(row, confluent=False))
    # each refused before Spark starts, naming the option and the file
    code, result = topic.run(topic.ingest("no-schema", kafka_value_format="avro"), spark=NoSpark())
    assert code == 2 and SCHEMA_FILE in result["message"], result
    not_a_record = tmp_path / "string.avsc"
    not_a_record.write_text('"string"')
    code, result = topic.run(topic.ingest("string", kafka_value_format="avro",
                                          hoodie_conf={SCHEMA_FILE: str(not_a_record)}), spark=NoSpark())
    assert code == 2 and "not a record schema" in result["message"] and str(not_a_record) in result["message"], result
    code, result = topic.run(topic.ingest("missing", kafka_value_format="avro",
                                          hoodie_conf={SCHEMA_FILE: str(tmp_path / "none.avsc")}), spark=NoSpark())
    assert code == 2 and "cannot be read" in result["message"], result
    assert not topic.table.exists()
