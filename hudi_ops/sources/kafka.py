"""Messages of a Kafka topic (`--source-kind kafka`): what the table's ingest of the topic has not taken,
by offset, and HoodieStreamer's checkpoints.

A commit of a Kafka ingest records the offsets it read up to in HoodieStreamer's key and format
(`streamer.checkpoint.key.v2` = `topic,partition:offset,...`, each the next offset to read), so a table
moves between HoodieStreamer and hudi-ops either way; hudi-ops' own key beside it names the run. A run
starts from the newest completed commit whose checkpoint names the topic (v2, else HoodieStreamer's v1
key), past other writers' commits and other topics' (each pipeline keeps its own), and reads up to the
end offsets the topic has when the run starts: exact ranges, so an attempt that is retried reads the
same messages again, and a bound (`--source-limit-events`, HoodieStreamer's
`hoodie.streamer.kafka.source.maxEvents`) cuts a catch-up into commits. Offsets the topic no longer
holds (its retention passed the checkpoint) fail the run naming the range, unless the user asks to skip
them, which the commit records.

Asked in Python (confluent-kafka, the client of Airflow's Kafka provider), without a JVM.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from hudi_ops.errors import ConfigError, HudiOpsError, InvalidInputError, SourceUnavailableError, TableNotFoundError
from hudi_ops.format.meta_client import MetaClient
from hudi_ops.options.keys import StreamerConfig
from hudi_ops.read.pipeline_metadata import INGEST_CHECKPOINT_KEY, IngestCheckpoint, newest_extra_metadata
from hudi_ops.s3_settings import S3Settings
from hudi_ops.storage import Storage

#: HoodieStreamer's checkpoint keys in a commit's extra metadata (Hudi's StreamerCheckpointV2 and V1)
STREAMER_CHECKPOINT_KEY_V2 = "streamer.checkpoint.key.v2"
STREAMER_CHECKPOINT_KEY_V1 = "deltastreamer.checkpoint.key"
#: HoodieStreamer's option keys, which hudi-ops' Kafka ingest takes as they are
TOPIC = StreamerConfig.KAFKA_TOPIC.name
MAX_EVENTS = StreamerConfig.KAFKA_MAX_EVENTS.name
#: false: offsets the topic no longer holds are skipped (and recorded); hudi-ops' default is true, where
#: HoodieStreamer's is false and resets to the earliest offset silently (apache/hudi#5400)
FAIL_ON_DATA_LOSS = StreamerConfig.KAFKA_FAIL_ON_DATA_LOSS.name
#: a commit's record of the offsets a run skipped: `topic,partition:from-to,...` (to exclusive)
SKIPPED_KEY = "_hudi_ops.kafka.skipped"
#: the Kafka client's settings among a job's options: `kafka.bootstrap.servers`, ... (Spark's prefix)
CLIENT_PREFIX = "kafka."
_TIMEOUT_S = 30.0
#: the longest one call into librdkafka waits: a C call holds back the driver's signals until it returns, and
#: the signal that ends a job whose task is gone must not wait for a broker that is down (driver_lifetime)
_SLICE_S = 0.5


def source_id(topic: str) -> str:
    """How an ingest checkpoint names a topic (hudi_ops.read.pipeline_metadata)."""
    return f"kafka:{topic}"


@dataclass(frozen=True)
class KafkaOffsets:
    """A topic's offsets by partition, each the next one to read; prints as HoodieStreamer's checkpoint."""

    topic: str
    offsets: tuple[tuple[int, int], ...]  # (partition, offset), by partition

    @classmethod
    def of(cls, topic: str, offsets: Mapping[int, int]) -> KafkaOffsets:
        return cls(topic, tuple(sorted((int(p), int(o)) for p, o in offsets.items())))

    @classmethod
    def parse(cls, text: str) -> KafkaOffsets:
        """`topic,0:12,1:40`; ValueError when it is not one."""
        topic, _, rest = text.strip().partition(",")
        if not topic or not rest:
            raise ValueError(f"{text!r} is not a Kafka checkpoint (topic,partition:offset,...)")
        pairs = {}
        for item in rest.split(","):
            partition, sep, offset = item.partition(":")
            if not sep or not partition.strip().isdigit() or not offset.strip().lstrip("-").isdigit():
                raise ValueError(f"{text!r} is not a Kafka checkpoint: {item!r} is not partition:offset")
            pairs[int(partition)] = int(offset)
        return cls.of(topic, pairs)

    def __str__(self) -> str:
        return ",".join([self.topic, *(f"{p}:{o}" for p, o in self.offsets)])

    def as_dict(self) -> dict[int, int]:
        return dict(self.offsets)

    def spark_json(self) -> str:
        """As Spark's Kafka reader takes `startingOffsets` and `endingOffsets`."""
        return json.dumps({self.topic: {str(p): o for p, o in self.offsets}})


@dataclass(frozen=True)
class KafkaCheckpoint:
    """The newest checkpoint of a topic on the table: the offsets, the commit and the run that made it."""

    instant: str
    offsets: KafkaOffsets
    run: str = ""


def kafka_checkpoint(meta: MetaClient, topic: str) -> KafkaCheckpoint | None:
    """The newest completed commit's checkpoint of `topic`, active or archived: HoodieStreamer's (its v2 key,
    else its v1 key) or hudi-ops' own beside it, which holds the same offsets (a write that skips Hudi's
    pre-commit step, such as a bulk insert by rows, leaves HoodieStreamer's out); None before the topic's
    first ingest."""
    for instant, extra in newest_extra_metadata(meta):
        own = IngestCheckpoint.parse(instant, extra.get(INGEST_CHECKPOINT_KEY, ""))
        if own is not None and own.source == source_id(topic):
            return KafkaCheckpoint(instant, KafkaOffsets.parse(own.position), own.run)
        text = extra.get(STREAMER_CHECKPOINT_KEY_V2) or extra.get(STREAMER_CHECKPOINT_KEY_V1)
        if not text:
            continue
        try:
            offsets = KafkaOffsets.parse(text)
        except ValueError:
            continue  # another source's checkpoint (an upstream table's completion time) under HoodieStreamer's key
        if offsets.topic == topic:
            return KafkaCheckpoint(instant, offsets)
    return None


@dataclass(frozen=True)
class LostRange:
    partition: int
    start: int  # the checkpoint's offset
    end: int  # the earliest the topic still holds (exclusive end of what is lost)

    def __str__(self) -> str:
        return f"{self.partition}:{self.start}-{self.end}"


@dataclass(frozen=True)
class KafkaBatch:
    """One commit's offset range, and what it records."""

    start: KafkaOffsets
    end: KafkaOffsets
    events: int
    skipped: tuple[LostRange, ...] = ()

    def commit_metadata(self) -> dict[str, str]:
        """HoodieStreamer's key, for hudi_ops.spark.jobs.hudi_write's `commit_metadata`."""
        return {STREAMER_CHECKPOINT_KEY_V2: str(self.end)}

    def ingest_checkpoint(self, run: str) -> IngestCheckpoint:
        return IngestCheckpoint("", source_id(self.end.topic), str(self.end), run)

    def skipped_record(self) -> dict[str, str]:
        return {SKIPPED_KEY: ",".join([self.end.topic, *map(str, self.skipped)])} if self.skipped else {}


@dataclass(frozen=True)
class KafkaWork:
    topic: str
    checkpoint: KafkaCheckpoint | None
    start: KafkaOffsets  # where this run reads from, partition by partition
    end: KafkaOffsets  # the topic's end offsets when the run began (exclusive)
    lost: tuple[LostRange, ...] = field(default=())  # skipped, as the options asked

    @property
    def events(self) -> int:
        start = self.start.as_dict()
        return sum(o - start[p] for p, o in self.end.offsets)

    @property
    def position(self) -> str | None:
        return str(self.checkpoint.offsets) if self.checkpoint else None

    def batches(self, max_events: int = 0) -> list[KafkaBatch]:
        """The range in commits of at most `max_events` messages (0: one commit), partition by partition."""
        if not self.events:
            return []
        current, end = self.start.as_dict(), self.end.as_dict()
        out: list[KafkaBatch] = []
        while any(current[p] < end[p] for p in end):
            room, step = max_events or self.events, dict(current)
            for p in sorted(end):
                take = min(room, end[p] - current[p])
                if take > 0:
                    step[p], room = current[p] + take, room - take
            events = sum(step[p] - current[p] for p in end)
            out.append(KafkaBatch(KafkaOffsets.of(self.topic, current), KafkaOffsets.of(self.topic, step), events,
                                  self.lost if not out else ()))
            current = step
        return out

    def describe(self) -> str:
        since = f"since checkpoint {self.position}" if self.checkpoint else "(the table has no ingest of it yet)"
        return f"{self.events} new message(s) in topic {self.topic} {since}"


def kafka_work(base_path: str, topic: str, client: Mapping[str, str], *, fail_on_data_loss: bool = True,
               s3: S3Settings | None = None) -> KafkaWork:
    """What the table's ingest of `topic` has not taken, up to the topic's end offsets now. `client`: the
    Kafka client's settings (Java names, as Spark's reader takes them without their `kafka.` prefix);
    `s3`: how to reach a table on S3."""
    try:
        checkpoint = kafka_checkpoint(MetaClient.open(base_path, s3=s3), topic)
    except TableNotFoundError:
        checkpoint = None
    earliest, end = watermarks(topic, client)
    start = dict(earliest)  # a partition the checkpoint lacks (new, or a first run) from its beginning
    lost = []
    if checkpoint is not None:
        for p, offset in checkpoint.offsets.offsets:
            if p not in end:
                raise InvalidInputError(f"topic {topic} has no partition {p}, which the table's checkpoint "
                                        f"{checkpoint.offsets} (commit {checkpoint.instant}) names: was the topic "
                                        "deleted and made anew? Give the table's ingest another topic")
            if offset < earliest[p]:
                lost.append(LostRange(p, offset, earliest[p]))
            start[p] = max(offset, earliest[p])
            if offset > end[p]:
                raise InvalidInputError(f"the table's checkpoint {checkpoint.offsets} (commit {checkpoint.instant}) "
                                        f"is past the end of topic {topic}'s partition {p} (offset {end[p]}): was "
                                        "the topic made anew? Give the table's ingest another topic")
    if lost and fail_on_data_loss and checkpoint is not None:
        ranges = ", ".join(f"partition {r.partition} offsets {r.start} to {r.end - 1}" for r in lost)
        raise InvalidInputError(
            f"topic {topic} no longer holds messages this table has not ingested: {ranges} (its retention passed "
            f"the checkpoint {checkpoint.offsets} of commit {checkpoint.instant}); nothing was written. To skip "
            f"them and go on from the earliest offsets the topic holds, run once with {FAIL_ON_DATA_LOSS}=false "
            "(the commit records what was skipped)")
    return KafkaWork(topic, checkpoint, KafkaOffsets.of(topic, start), KafkaOffsets.of(topic, end), tuple(lost))


def watermarks(topic: str, client: Mapping[str, str]) -> tuple[dict[int, int], dict[int, int]]:
    """(earliest, end) offsets of each partition of `topic`: the first it holds, and the next to be written."""
    try:
        from confluent_kafka import Consumer, KafkaException, TopicPartition
    except ImportError:
        raise ConfigError("reading Kafka needs confluent-kafka: install hudi-ops[kafka]") from None
    settings = librdkafka_settings(client)
    try:
        consumer = Consumer({**settings, "group.id": "hudi-ops-offsets", "enable.auto.commit": False})
    except KafkaException as e:
        raise ConfigError(f"the Kafka client refuses the ingest's settings: {e}; fix the Kafka connection") from None
    try:
        topics = _answered(lambda timeout: consumer.list_topics(topic, timeout=timeout)).topics
        found = topics.get(topic)
        if found is None or not found.partitions:
            raise InvalidInputError(f"Kafka topic {topic} does not exist at {client.get('bootstrap.servers')}: check "
                                    "the topic's name and the ingest's Kafka connection")
        if found.error is not None:
            raise SourceUnavailableError(f"Kafka topic {topic} cannot be read at {client.get('bootstrap.servers')} "
                                         f"just now: {found.error.str()}; retried")
        earliest, end = {}, {}
        for p in sorted(found.partitions):
            low, high = _answered(lambda timeout, p=p: consumer.get_watermark_offsets(TopicPartition(topic, p),
                                                                                      timeout=timeout))
            earliest[p], end[p] = low, high
        return earliest, end
    except KafkaException as e:
        raise SourceUnavailableError(f"Kafka at {client.get('bootstrap.servers')} did not answer for topic {topic}: "
                                     f"{e}; retried (if it lasts, check the ingest's Kafka connection)") from None
    finally:
        consumer.close()


def _answered(call: Callable[[float], Any]) -> Any:
    """`call(timeout)`'s answer, asked in short calls until the broker answers or _TIMEOUT_S have passed."""
    from confluent_kafka import KafkaError, KafkaException

    deadline = time.monotonic() + _TIMEOUT_S
    unanswered = (KafkaError._TRANSPORT, KafkaError._TIMED_OUT, KafkaError._ALL_BROKERS_DOWN)
    while True:
        try:
            return call(max(0.01, min(_SLICE_S, deadline - time.monotonic())))
        except KafkaException as e:
            if e.args[0].code() not in unanswered or time.monotonic() >= deadline:
                raise


def value_schema_file(options: Mapping[str, str], value_format: str) -> str | None:
    """The file of the values' Avro schema the options name (HoodieStreamer's file-based schema
    provider's option); None for JSON values; InvalidInputError naming the option when Avro values have
    none."""
    if value_format == "json":
        return None
    key = StreamerConfig.SOURCE_SCHEMA_FILE.name
    path = options.get(key, "").strip()
    if not path:
        raise InvalidInputError(f"a Kafka ingest of {value_format} values needs their Avro schema: give the option "
                                f"{key}=PATH (the .avsc file the topic's producers write with; in the tables "
                                "config, `kafka_value_schema`)")
    return path


def read_value_schema(path: str) -> str:
    """The Avro schema in the file at `path` (a local path, or an s3:// or s3a:// URI), checked as one a
    topic's values can be rows of; InvalidInputError naming the file and the fix otherwise."""
    key = StreamerConfig.SOURCE_SCHEMA_FILE.name
    try:
        text = Storage.for_uri(path).read_bytes("").decode("utf-8")
    except (OSError, ValueError, HudiOpsError) as e:  # ValueError: a URI pyarrow cannot open, or not UTF-8
        raise InvalidInputError(f"the Avro schema {key}={path} cannot be read ({e}): give the path of the .avsc "
                                "file the topic's producers write with (a local path, or an s3:// URI)") from None
    return avro_value_schema(text, path)


def avro_value_schema(text: str, where: str) -> str:
    """The Avro schema in `text` (read from `where`), checked as one a topic's values can be rows of: a
    record; InvalidInputError naming the file and the fix otherwise."""
    try:
        schema = json.loads(text)
    except json.JSONDecodeError as e:
        raise InvalidInputError(f"the Avro schema {where} is not JSON ({e}): give the .avsc file the topic's "
                                "producers write with") from None
    if not isinstance(schema, dict) or schema.get("type") != "record" or not schema.get("fields"):
        raise InvalidInputError(f"the Avro schema {where} is not a record schema (type record, with fields): each "
                                "message's value must be a record, whose fields become the row's columns")
    return json.dumps(schema)


def fails_on_data_loss(options: Mapping[str, str]) -> bool:
    """Whether lost offsets fail the run (hudi-ops' default), by the options' FAIL_ON_DATA_LOSS."""
    return options.get(FAIL_ON_DATA_LOSS, "true").strip().lower() != "false"


def max_events(options: Mapping[str, str]) -> int:
    """HoodieStreamer's bound of messages per commit among the options; 0: none."""
    text = options.get(MAX_EVENTS, "0").strip() or "0"
    if not text.isdigit():
        raise ConfigError(f"{MAX_EVENTS}={text!r} is not a count of messages; give a whole number (0: no bound)")
    return int(text)


def client_settings(options: Mapping[str, str]) -> dict[str, str]:
    """The Kafka client's settings among a job's options (`kafka.*`), without the prefix."""
    return {k[len(CLIENT_PREFIX):]: v for k, v in options.items() if k.startswith(CLIENT_PREFIX)}


def librdkafka_settings(client: Mapping[str, str]) -> dict[str, str]:
    """The Java client's settings as confluent-kafka (librdkafka) names them, of those both have: the
    brokers, the protocol, SASL's PLAIN and SCRAM logins (from Java's JAAS line) and a PEM trust store."""
    out = {k: v for k, v in client.items() if k in _SHARED_SETTINGS}
    jaas = client.get("sasl.jaas.config", "")
    for name in ("username", "password"):
        marker = f'{name}="'
        if marker in jaas:
            out[f"sasl.{name}"] = jaas.split(marker, 1)[1].split('"', 1)[0]
    if client.get("ssl.truststore.location") and client.get("ssl.truststore.type", "").upper() == "PEM":
        out["ssl.ca.location"] = client["ssl.truststore.location"]
    if out.get("ssl.endpoint.identification.algorithm") == "":  # Java's "" is librdkafka's "none"
        out["ssl.endpoint.identification.algorithm"] = "none"
    if "bootstrap.servers" not in out:
        raise ConfigError("the Kafka ingest needs its brokers: give kafka.bootstrap.servers (the Kafka connection's "
                          "bootstrap.servers)")
    return out


#: settings the Java client and librdkafka name alike
_SHARED_SETTINGS = ("bootstrap.servers", "security.protocol", "sasl.mechanism", "client.id",
                    "ssl.endpoint.identification.algorithm")
