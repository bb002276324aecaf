"""An Airflow connection of the Kafka provider's `kafka` type, as the Kafka client settings of an ingest.

The provider's own convention, so one connection serves it and hudi-ops: the extra is the client's
settings as confluent-kafka (librdkafka) names them (`bootstrap.servers`, `security.protocol`,
`sasl.mechanism(s)`, `sasl.username`, `sasl.password`, `ssl.ca.location`). A job takes them as `kafka.*`
options with the Java client's names, as Spark's Kafka reader does, in its `--props` file (readable by the
task's user only), never on spark-submit's command line. A consumer group's settings are left out:
hudi-ops reads exact offset ranges and keeps its offsets in the table.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from airflow.sdk import BaseHook
from airflow.sdk.exceptions import AirflowNotFoundException

from hudi_ops.errors import ConfigError
from hudi_ops.sources.kafka import CLIENT_PREFIX

CONN_TYPE = "kafka"
DEFAULT_CONN_ID = "kafka_default"
#: a consumer group's settings (and Spark's reader refuses some of them): hudi-ops reads exact ranges
_GROUP_KEYS = ("group.id", "enable.auto.commit", "auto.offset.reset", "enable.auto.offset.store",
               "key.deserializer", "value.deserializer", "interceptor.classes")
#: librdkafka's client-certificate files, which Java's client takes only as a key store
_UNMAPPED = ("ssl.key.location", "ssl.certificate.location", "ssl.key.pem", "ssl.certificate.pem",
             "ssl.keystore.location")
_LOGIN_MODULES = {"PLAIN": "org.apache.kafka.common.security.plain.PlainLoginModule",
                  "SCRAM-SHA-256": "org.apache.kafka.common.security.scram.ScramLoginModule",
                  "SCRAM-SHA-512": "org.apache.kafka.common.security.scram.ScramLoginModule"}


def kafka_options(conn_id: str) -> dict[str, str]:
    """The `kafka.*` options of the connection `conn_id`."""
    try:
        conn = BaseHook.get_connection(conn_id)
    except AirflowNotFoundException:
        raise ConfigError(f"no Airflow connection {conn_id!r}: add one of type kafka whose extra holds the "
                          '{"bootstrap.servers": "host:9092", ...} of the ingest\'s Kafka') from None
    return {CLIENT_PREFIX + k: v for k, v in java_client_settings(conn.extra_dejson, conn_id).items()}


def java_client_settings(extra: Mapping[str, Any], conn_id: str = "") -> dict[str, str]:
    """librdkafka's settings as the Java client names them (hudi_ops.sources.kafka.librdkafka_settings
    turns them back)."""
    unmapped = sorted(set(extra) & set(_UNMAPPED))
    if unmapped:
        raise ConfigError(f"the Kafka connection {conn_id!r} sets {', '.join(unmapped)} (a client certificate), which "
                          "hudi-ops cannot hand to Spark's Kafka reader yet: use SASL over SSL")
    out = {k: str(v) for k, v in extra.items() if k not in _GROUP_KEYS and not k.endswith("_cb")}
    if out.get("ssl.endpoint.identification.algorithm") == "none":  # librdkafka's "none" is Java's ""
        out["ssl.endpoint.identification.algorithm"] = ""
    if "sasl.mechanisms" in out:
        out["sasl.mechanism"] = out.pop("sasl.mechanisms")
    username, password = out.pop("sasl.username", None), out.pop("sasl.password", None)
    if username is not None:
        mechanism = out.get("sasl.mechanism", "PLAIN").upper()
        if mechanism not in _LOGIN_MODULES:
            raise ConfigError(f"the Kafka connection {conn_id!r} logs in with SASL {mechanism}, which hudi-ops cannot "
                              f"pass to Spark's reader; use one of {', '.join(_LOGIN_MODULES)}")
        out["sasl.jaas.config"] = (f'{_LOGIN_MODULES[mechanism]} required username="{_quoted(username)}" '
                                   f'password="{_quoted(password or "")}";')
    if "ssl.ca.location" in out:
        out["ssl.truststore.location"] = out.pop("ssl.ca.location")
        out["ssl.truststore.type"] = "PEM"
    if not out.get("bootstrap.servers"):
        raise ConfigError(f"the Kafka connection {conn_id!r} names no brokers: its extra needs "
                          '"bootstrap.servers"')
    return out


def _quoted(text: str) -> str:
    if '"' in text or "\\" in text:
        raise ConfigError("a Kafka login with a double quote or a backslash cannot go into Java's JAAS line")
    return text
