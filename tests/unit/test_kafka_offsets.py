"""Kafka offsets as HoodieStreamer writes its checkpoints, and a run's range cut into commits."""

from __future__ import annotations

import itertools
import re

import pytest

from hudi_ops.errors import ConfigError
from hudi_ops.sources.kafka import KafkaCheckpoint, KafkaOffsets, KafkaWork, LostRange, librdkafka_settings


def test_a_checkpoint_prints_back_exactly_as_hoodie_streamer_writes_it():
    text = "trips,0:12,1:40,2:0"
    offsets = KafkaOffsets.parse(text)
    assert offsets.topic == "trips" and offsets.as_dict() == {0: 12, 1: 40, 2: 0}
    assert str(offsets) == text
    assert str(KafkaOffsets.of("trips", {2: 0, 0: 12, 1: 40})) == text  # by partition, whatever the order given
    assert offsets.spark_json() == '{"trips": {"0": 12, "1": 40, "2": 0}}'


@pytest.mark.parametrize("text", ["trips", "trips,", "trips,0", "trips,a:1", "trips,0:x", "/landing/trips/f.parquet",
                                  "20261127101010000"])
def test_what_is_not_a_kafka_checkpoint_is_refused(text):
    with pytest.raises(ValueError):
        KafkaOffsets.parse(text)


def work(start, end, lost=()):
    return KafkaWork("t", KafkaCheckpoint("1", KafkaOffsets.of("t", start)), KafkaOffsets.of("t", start),
                     KafkaOffsets.of("t", end), tuple(lost))


def test_a_range_is_cut_into_commits_of_at_most_the_bound_and_covers_it_exactly():
    w = work({0: 5, 1: 0, 2: 7}, {0: 12, 1: 4, 2: 7})
    assert w.events == 11
    batches = w.batches(5)
    assert [b.events for b in batches] == [5, 5, 1]
    assert batches[0].start == w.start and batches[-1].end == w.end
    assert all(a.end == b.start for a, b in itertools.pairwise(batches))
    assert [str(b.end) for b in batches] == ["t,0:10,1:0,2:7", "t,0:12,1:3,2:7", "t,0:12,1:4,2:7"]
    assert [b.events for b in w.batches()] == [11]  # no bound: one commit


def test_nothing_new_is_no_batch_and_a_skip_is_recorded_once():
    assert work({0: 3}, {0: 3}).batches() == []
    lost = LostRange(0, 3, 9)
    batches = work({0: 9}, {0: 20}, [lost]).batches(5)
    assert batches[0].skipped_record() == {"_hudi_ops.kafka.skipped": "t,0:3-9"}
    assert all(not b.skipped for b in batches[1:])


def test_the_java_clients_sasl_login_becomes_librdkafkas():
    jaas = 'org.apache.kafka.common.security.plain.PlainLoginModule required username="u" password="p w";'
    settings = librdkafka_settings({"bootstrap.servers": "127.0.0.1:9092", "security.protocol": "SASL_SSL",
                                    "sasl.mechanism": "PLAIN", "sasl.jaas.config": jaas})
    assert settings == {"bootstrap.servers": "127.0.0.1:9092", "security.protocol": "SASL_SSL",
                        "sasl.mechanism": "PLAIN", "sasl.username": "u", "sasl.password": "p w"}
    with pytest.raises(ConfigError, match=r"kafka\.bootstrap\.servers"):
        librdkafka_settings({})


def test_an_airflow_kafka_connection_becomes_the_java_clients_settings_and_back():
    from hudi_ops.airflow.hooks.kafka import java_client_settings

    extra = {"bootstrap.servers": "127.0.0.1:9092", "security.protocol": "SASL_SSL", "sasl.mechanisms": "SCRAM-SHA-512",
             "sasl.username": "reader", "sasl.password": "s3cret", "ssl.ca.location": "/etc/ca.pem",
             "ssl.endpoint.identification.algorithm": "none", "group.id": "airflow", "enable.auto.commit": "false",
             "error_cb": "my.module.cb"}
    java = java_client_settings(extra, "kafka_default")
    assert java == {"bootstrap.servers": "127.0.0.1:9092", "security.protocol": "SASL_SSL",
                    "sasl.mechanism": "SCRAM-SHA-512", "ssl.truststore.location": "/etc/ca.pem",
                    "ssl.truststore.type": "PEM", "ssl.endpoint.identification.algorithm": "",
                    "sasl.jaas.config": 'org.apache.kafka.common.security.scram.ScramLoginModule required '
                                        'username="reader" password="s3cret";'}
    back = librdkafka_settings(java)  # what the job's look at the offsets connects with
    assert back == {"bootstrap.servers": "127.0.0.1:9092", "security.protocol": "SASL_SSL",
                    "sasl.mechanism": "SCRAM-SHA-512", "sasl.username": "reader", "sasl.password": "s3cret",
                    "ssl.ca.location": "/etc/ca.pem", "ssl.endpoint.identification.algorithm": "none"}


@pytest.mark.parametrize(("extra", "said"), [
    ({}, "names no brokers"),
    ({"bootstrap.servers": "b:9092", "ssl.key.location": "/k.pem"}, "ssl.key.location (a client certificate)"),
    ({"bootstrap.servers": "b:9092", "sasl.mechanism": "GSSAPI", "sasl.username": "u"}, "SASL GSSAPI"),
])
def test_a_kafka_connection_hudi_ops_cannot_pass_on_is_refused_naming_why(extra, said):
    from hudi_ops.airflow.hooks.kafka import java_client_settings

    with pytest.raises(ConfigError, match=re.escape(said)):
        java_client_settings(extra, "kafka_default")
