"""A real Kafka broker for the tests: one KRaft node (broker and controller in
one process) on loopback, its log in a tmp folder.

Its jars: Apache Kafka's server and what it needs at run time, fetched from Maven into hudi-ops' jar
cache (`python -m local_platform.jars fetch kafka-broker`, which make runs). `stop()` ends the process (SIGTERM, or
SIGKILL with `hard=True`) and `start()` brings it back on the same ports and log folder, with its topics
and their messages, as a restarted broker keeps them.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
import uuid
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from hudi_ops.errors import ConfigError
from hudi_ops.maven import MavenArtifact, fetched, jars_dir
from local_platform.ports import free_port, port_open
from local_platform.server_process import ServerProcess

RELEASE = "4.1.1"
#: the broker logs through SLF4J 1.7 (Kafka's own API release) to stderr, that is its log file
SERVER_ARTIFACTS = (
    MavenArtifact("org.apache.kafka", "kafka_2.13", RELEASE),
    MavenArtifact("org.slf4j", "slf4j-simple", "1.7.36"),
)


def maven_jars_dir() -> Path:
    return jars_dir() / f"kafka-{RELEASE}"


def require_kafka() -> str:
    """The broker's classpath, or a ConfigError that names the fix."""
    if shutil.which("java") is None:
        raise ConfigError("starting Kafka needs `java` (17) on PATH")
    if not fetched(maven_jars_dir()):
        raise ConfigError("Kafka's jars are not fetched: run `python -m local_platform.jars fetch kafka-broker` "
                          "(make does)")
    return f"{maven_jars_dir()}/*"


class KafkaServer(ServerProcess):
    """`.bootstrap_servers` (`127.0.0.1:PORT`), `.start()`, `.stop(hard=False)`, `.cleanup()`."""

    def __init__(self, root: Path | None = None, *, port: int | None = None) -> None:
        self.root = Path(root) if root is not None else Path(tempfile.mkdtemp(prefix="hudi-ops-kafka-"))
        self.root.mkdir(parents=True, exist_ok=True)
        self.port, self.controller_port = port or free_port(), free_port()
        self.bootstrap_servers = f"127.0.0.1:{self.port}"
        self.log_dir = self.root / "data"
        self.log_path = self.root / "kafka.log"
        self.config_path = self.root / "server.properties"
        self.config_path.write_text("\n".join([
            "process.roles=broker,controller",
            "node.id=1",
            f"controller.quorum.bootstrap.servers=127.0.0.1:{self.controller_port}",
            f"listeners=PLAINTEXT://127.0.0.1:{self.port},CONTROLLER://127.0.0.1:{self.controller_port}",
            f"advertised.listeners=PLAINTEXT://127.0.0.1:{self.port}",
            "controller.listener.names=CONTROLLER",
            "inter.broker.listener.name=PLAINTEXT",
            "listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
            f"log.dirs={self.log_dir}",
            "num.partitions=1",
            # one node: every internal topic has one replica
            "offsets.topic.replication.factor=1",
            "transaction.state.log.replication.factor=1",
            "transaction.state.log.min.isr=1",
            "share.coordinator.state.topic.replication.factor=1",
            "share.coordinator.state.topic.min.isr=1",
            "group.initial.rebalance.delay.ms=0",
            # one partition for the consumer groups' offsets instead of 50: a broker started again after a
            # kill -9 recovers each log before it answers, 53 logs took over 60 s on two busy cores
            "offsets.topic.num.partitions=1",
            # retention is checked every few seconds, so a test can make old offsets go away (the log's start
            # moves at once; its files go a second later: at 0 the broker's task that deletes them reschedules
            # itself without a pause, and its ten threads spent a tenth of a core while the broker idled)
            "log.retention.check.interval.ms=2000",
            "log.segment.delete.delay.ms=1000",
            "background.threads=2",
            "",
        ]))
        self.classpath = require_kafka()
        self._formatted = False
        super().__init__()

    def start(self, timeout_s: float = 180.0) -> None:
        """Until the broker answers. A restart after a kill -9, on two cores busy with other JVMs, was still
        starting after 60 s (make test: the chaos core beside make up's stack)."""
        if self.running:
            return
        if not self._formatted and not (self.log_dir / "meta.properties").is_file():
            cluster = uuid.uuid4().bytes.hex()[:22]  # any 22 characters do as a cluster id
            self._java("kafka.tools.StorageTool", "format", "--standalone", "-t", cluster, "-c",
                       str(self.config_path))
        self._formatted = True
        self._launch(["java", "-Xmx512m", "-cp", self.classpath, "kafka.Kafka", str(self.config_path)])
        self._wait_ready(timeout_s)

    def create_topic(self, topic: str, partitions: int = 3) -> None:
        """The topic, unless the broker has it (a restart keeps the broker's data)."""
        from confluent_kafka.admin import AdminClient, NewTopic

        admin = AdminClient({"bootstrap.servers": self.bootstrap_servers})
        if topic not in admin.list_topics(timeout=30).topics:
            admin.create_topics([NewTopic(topic, num_partitions=partitions, replication_factor=1)])[topic].result(30)

    def _java(self, main: str, *args: str) -> None:
        done = subprocess.run(["java", "-cp", self.classpath, main, *args], capture_output=True, text=True,
                              check=False)
        if done.returncode != 0:
            raise RuntimeError(f"{main} {' '.join(args)} failed: {done.stdout[-2000:]}{done.stderr[-2000:]}")

    def _wait_ready(self, timeout_s: float) -> None:
        self._until_ready("Kafka", self._answers, timeout_s)

    def _answers(self) -> bool:
        """Whether the broker answers a metadata request (its port opens a little before it can)."""
        from confluent_kafka.admin import AdminClient

        if not port_open(self.port):
            return False
        try:
            AdminClient({"bootstrap.servers": self.bootstrap_servers}).list_topics(timeout=2.0)
        except Exception:  # librdkafka's KafkaException: not ready yet
            return False
        return True



def produce_json(bootstrap_servers: str, topic: str, rows: Iterable[Mapping[str, Any]], *, key: str) -> int:
    """`rows` as JSON messages of `topic`, each keyed by its `key` field (one key's changes stay in one
    partition, in order); how many."""
    from confluent_kafka import Producer

    producer, sent = Producer({"bootstrap.servers": bootstrap_servers}), 0
    for row in rows:
        producer.produce(topic, key=str(row[key]).encode(), value=json.dumps(row).encode())
        sent += 1
    if producer.flush(30):
        raise ConfigError(f"the Kafka broker at {bootstrap_servers} did not take all {sent} messages for topic "
                          f"{topic} within 30 s: see the broker's log (kafka.log in its folder)")
    return sent
