"""`make up` without a tables config serves two example tables, one fed by files, one by a Kafka topic. The
platform itself, started as a user starts
it and stopped with Ctrl-C, is tests/airflow/test_local_airflow.py's stack."""

from __future__ import annotations

from hudi_ops.airflow.dag_factory.factory import dags_from_file
from hudi_ops.airflow.dag_factory.tables_config import TABLES_CONFIG_ENV, read_tables_config
from local_platform.platform import (
    EXAMPLE_INGEST_SCHEDULE,
    EXAMPLE_TOPIC,
    Platform,
    chosen_tables_config,
    example_tables_config,
)
from local_platform.sample_stream import TRIPS_PER_BURST, SampleStream
from local_platform.sample_trips import TRIPS_PER_FILE, SampleFeed


def test_without_a_tables_config_make_up_makes_example_tables_with_their_folders(tmp_path, monkeypatch):
    monkeypatch.delenv(TABLES_CONFIG_ENV, raising=False)
    config = chosen_tables_config(tmp_path)
    assert config == tmp_path / "tables.yaml" and config.read_text().startswith("# written by `make up`")
    assert (tmp_path / "data" / "landing" / "trips").is_dir() and (tmp_path / "data" / "history" / "trips").is_dir()
    platform = Platform(tmp_path, config, port=1)  # not started: what it would serve
    assert set(platform.tables) == {"trips", "trips_stream"} and not platform.refused
    assert platform.example_source == str(tmp_path / "data" / "landing" / "trips")  # where sample files land
    assert platform.example_stream and platform.topics == [EXAMPLE_TOPIC]  # sample messages go to the topic
    tables = read_tables_config(config).tables
    assert tables["trips"].ingest.source_path == str(tmp_path / "data" / "landing" / "trips")
    stream = tables["trips_stream"].ingest
    assert (stream.source_kind, stream.kafka_topic, stream.kafka_conn_id, stream.on_new_messages) == (
        "kafka", EXAMPLE_TOPIC, "kafka_default", True)
    assert set(dags_from_file(config)) == {"hudi_backfill__trips", *(  # the stream has no folder of days
        f"hudi_{dag}__{table}" for table in tables for dag in ("ingest", "services", "restore"))}
    (tmp_path / "data" / "landing" / "trips" / "a.parquet").write_bytes(b"")
    example_tables_config(tmp_path)  # a second start keeps what landed
    assert (tmp_path / "data" / "landing" / "trips" / "a.parquet").is_file()


def test_make_up_serves_the_tables_config_it_is_given(tmp_path, monkeypatch):
    given = tmp_path / "mine.yaml"
    monkeypatch.setenv(TABLES_CONFIG_ENV, str(given))
    assert chosen_tables_config(tmp_path / "home") == given and not (tmp_path / "home").exists()
    given.write_text(example_tables_config(tmp_path / "elsewhere").read_text())  # a copy of the example
    mine = Platform(tmp_path / "home", given, port=1)
    assert mine.example_source is None and not mine.example_stream  # the user's own: no samples


def test_the_example_tables_landing_folder_gets_new_trips_and_corrections_of_the_last_files(tmp_path):
    import datetime as dt

    import pyarrow.parquet as pq

    landing = tmp_path / "landing"
    feed = SampleFeed(landing)
    first = pq.read_table(feed.land(dt.datetime(2026, 11, 26, 23, 59, tzinfo=dt.UTC))).to_pylist()
    second = pq.read_table(feed.land(dt.datetime(2026, 11, 27, 0, 2, tzinfo=dt.UTC))).to_pylist()
    assert len(first) == TRIPS_PER_FILE and len({r["trip_id"] for r in first}) == TRIPS_PER_FILE
    earlier = {r["trip_id"]: r for r in first}
    corrected = [r for r in second if r["trip_id"] in earlier]
    assert len(second) == TRIPS_PER_FILE + len(corrected) and len(corrected) == TRIPS_PER_FILE // 10
    # a correction keeps its trip's day (its partition) and comes later, so it wins by the ordering field
    assert all(r["dt"] == earlier[r["trip_id"]]["dt"] == "2026-11-26" and r["ts"] > earlier[r["trip_id"]]["ts"]
               for r in corrected)
    assert sorted(p.name for p in landing.iterdir()) == ["trips-000000.parquet", "trips-000001.parquet"]
    assert SampleFeed(landing).landed == 2  # a restart of make up goes on from the files there
    (landing / "trips-000000.parquet").unlink()  # an early file removed: the next still follows the newest
    assert SampleFeed(landing).land().name == "trips-000002.parquet"
    # the example's ingest takes, every few minutes, the files landed since its last run
    config = read_tables_config(example_tables_config(tmp_path / "home"))
    assert config.tables["trips"].ingest.schedule == EXAMPLE_INGEST_SCHEDULE == "*/5 * * * *"


def test_the_example_stream_sends_bursts_of_new_trips_and_new_fares_for_some_of_the_last(kafka):
    """Keyed by trip, a correction keeps its trip's day (its partition), even past midnight; the keys name
    the stream's start, so make up started again sends new ones."""
    import datetime as dt
    import json
    import uuid

    from confluent_kafka import OFFSET_BEGINNING, Consumer, TopicPartition

    from hudi_ops.sources.kafka import watermarks

    stream = SampleStream(kafka.bootstrap_servers, f"sample-{uuid.uuid4().hex[:8]}")
    kafka.create_topic(stream.topic)
    kafka.create_topic(stream.topic)  # there already: kept, as a restart of make up finds it
    late = dt.datetime(2026, 11, 26, 23, 59, 30, tzinfo=dt.UTC)
    early = late + dt.timedelta(minutes=1)
    assert stream.send(late) == TRIPS_PER_BURST and stream.send(early) == TRIPS_PER_BURST + TRIPS_PER_BURST // 10
    _, ends = watermarks(stream.topic, {"bootstrap.servers": kafka.bootstrap_servers})
    assert len(ends) == 3 and sum(ends.values()) == 2 * TRIPS_PER_BURST + TRIPS_PER_BURST // 10
    consumer = Consumer({"bootstrap.servers": kafka.bootstrap_servers, "group.id": "t", "enable.auto.commit": False})
    consumer.assign([TopicPartition(stream.topic, p, OFFSET_BEGINNING) for p in ends])
    trips = []
    while len(trips) < sum(ends.values()):
        message = consumer.poll(10)
        assert message is not None and message.error() is None
        trips.append((message.key().decode(), json.loads(message.value())))
    consumer.close()
    assert all(key == trip["trip_id"] for key, trip in trips)  # keyed by trip: a trip's changes stay in order
    days: dict[str, set[str]] = {}
    for key, trip in trips:
        days.setdefault(key, set()).add(trip["dt"])
    assert len(days) == 2 * TRIPS_PER_BURST and all(len(d) == 1 for d in days.values())  # one day per trip
    assert sorted(d for ds in days.values() for d in ds).count("2026-11-26") == TRIPS_PER_BURST
    assert all(key.startswith(f"stream-{stream.run}-") for key in days)
