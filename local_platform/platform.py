"""`make up` (`python -m local_platform.platform`): the platform on one machine, up until Ctrl-C.

A ZooKeeper server, a Kafka broker (KRaft) when a table reads one and a Hive Metastore when a table is
synced to one, then Airflow (api-server, scheduler, dag-processor,
triggerer) on 127.0.0.1 with the repo's DAGs and timeline view, the tables config
`$HUDI_OPS_TABLES_CONFIG` (without one, two example tables: `trips`, fed by files landing in a folder,
and `trips_stream`, fed by a Kafka topic, both made under the platform's home), and the connections its
DAGs use: `hudi_zookeeper_default` (this ZooKeeper), `kafka_default` (this broker, with the topics the
tables read through it), `metastore_default` (this metastore, where `trips` is registered as
`lake.trips_ro` and `lake.trips_rt`), `spark_default` (Spark in local mode) and `hudi_ops_airflow_api` (this
api-server, for the restore DAG).
The admin password is printed once. SIGINT (Ctrl-C) or SIGTERM stops everything it started; the
home (Airflow's database, ZooKeeper's data, the example table) stays for the next start.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import signal
import sys
import threading
from pathlib import Path

import yaml

from hudi_ops.airflow.dag_factory.tables_config import TABLES_CONFIG_ENV, read_tables_config
from hudi_ops.airflow.hooks.hive_metastore import DEFAULT_CONN_ID as METASTORE_CONN_ID
from hudi_ops.airflow.hooks.kafka import DEFAULT_CONN_ID as DEFAULT_KAFKA_CONN_ID
from hudi_ops.airflow.ui.view_model import table_entries
from hudi_ops.errors import ConfigError
from local_platform.hive_metastore import HiveMetastoreServer
from local_platform.kafka_server import KafkaServer
from local_platform.local_airflow import LocalAirflow
from local_platform.sample_stream import SampleStream
from local_platform.sample_trips import SampleFeed
from local_platform.zookeeper_server import ZookeeperServer, require_zookeeper

REPO = Path(__file__).resolve().parents[1]
LOCK_BASE_PATH = "/hudi/locks"
DEFAULT_PORT = 8080
_CHECK_EVERY_S = 2.0
#: the example table's ingest: each tick takes the sample files landed since the last (local_platform.sample_trips)
EXAMPLE_INGEST_SCHEDULE = "*/5 * * * *"
#: the example stream's topic, its ingest run by new messages (local_platform.sample_stream) and at
#: least this often
EXAMPLE_TOPIC, EXAMPLE_STREAM_SCHEDULE = "trips", "*/15 * * * *"
#: the trigger's consumer group, of the Kafka provider's message-queue trigger (hudi-ops' jobs use none);
#: a new group starts at a topic's earliest offset, so messages sent before its trigger joined wake the ingest
TRIGGER_GROUP = "hudi-ops-triggers"
#: the example table's database in the platform's Hive Metastore
EXAMPLE_DATABASE = "lake"


def example_tables_config(home: Path) -> Path:
    """A tables config with two tables whose folders live under `home`, for a first look: `trips` fed by a
    landing folder, `trips_stream` by a topic of this platform's broker."""
    data = home / "data"
    for folder in ("landing/trips", "history/trips"):
        (data / folder).mkdir(parents=True, exist_ok=True)
    config = {
        "defaults": {"spark_conf": {"spark.ui.enabled": "false"}},
        "tables": {"trips": {
            "base_path": str(data / "hudi" / "trips"), "record_key": "trip_id", "partition_field": "dt",
            "ordering_field": "ts", "table_type": "MERGE_ON_READ",
            "ingest": {"source_path": str(data / "landing" / "trips"), "schedule": EXAMPLE_INGEST_SCHEDULE},
            "backfill": {"source_path": str(data / "history" / "trips")},
            # registered as lake.trips_ro and lake.trips_rt in this platform's Hive Metastore
            "catalog": {"database": EXAMPLE_DATABASE},
            "services": {"compaction": {}, "clean": {"hoodie.cleaner.commits.retained": "10"}},
        }, "trips_stream": {
            "base_path": str(data / "hudi" / "trips_stream"), "record_key": "trip_id", "partition_field": "dt",
            "ordering_field": "ts", "table_type": "MERGE_ON_READ",
            "ingest": {"source_kind": "kafka", "kafka_topic": EXAMPLE_TOPIC, "on_new_messages": True,
                       "schedule": EXAMPLE_STREAM_SCHEDULE},
            "services": {"compaction": {}, "clean": {"hoodie.cleaner.commits.retained": "10"}},
        }},
    }
    path = example_tables_path(home)
    path.write_text("# written by `make up`: set HUDI_OPS_TABLES_CONFIG to use your own\n"
                    + yaml.safe_dump(config, sort_keys=False))
    return path


def example_tables_path(home: Path) -> Path:
    return Path(home) / "tables.yaml"


def chosen_tables_config(home: Path) -> Path:
    """$HUDI_OPS_TABLES_CONFIG, or without it the example table's, written under `home`."""
    if os.environ.get(TABLES_CONFIG_ENV):
        return Path(os.environ[TABLES_CONFIG_ENV]).resolve()
    return example_tables_config(home)


class Platform:
    """ZooKeeper, Kafka and a Hive Metastore (when the tables need them) and Airflow under `home`; `start()`,
    then `stop()` (also on leaving a `with` block)."""

    def __init__(self, home: Path, tables_config: Path, *, port: int = DEFAULT_PORT) -> None:
        self.home, self.tables_config = Path(home), Path(tables_config)
        config = read_tables_config(self.tables_config)
        #: where the example table's sample files land (None: the tables are the user's own)
        example = config.tables.get("trips") if self.tables_config == example_tables_path(self.home) else None
        self.example_source = example.ingest.source_path if example and example.ingest else None
        self.example_stream = example is not None and "trips_stream" in config.tables
        self.tables = table_entries(config, origin=str(self.tables_config))
        #: the topics its tables read through kafka_default, this broker: made before their watchers start
        self.topics = sorted({topic for t in config.tables.values() if t.ingest
                              and t.ingest.kafka_conn_id == DEFAULT_KAFKA_CONN_ID for topic in t.ingest.topics})
        self.refused = config.refused  # no DAGs, and an import error in Airflow; the other tables run
        self.zookeeper = ZookeeperServer(self.home / "zookeeper")
        # a broker when a table reads one through kafka_default; its topics stay for the next start, on new ports
        self.kafka = KafkaServer(self.home / "kafka") if self.topics else None
        # a metastore when a table is synced to one through metastore_default; its catalog stays for the next start
        synced = any(t.catalog and t.catalog.hive_metastore_conn_id == METASTORE_CONN_ID
                     for t in config.tables.values())
        self.metastore = HiveMetastoreServer(self.home / "hive_metastore") if synced else None
        self.lineage_file = self.home / "lineage" / "events.jsonl"
        self.lineage_file.parent.mkdir(parents=True, exist_ok=True)
        self.airflow = LocalAirflow(self.home / "airflow", dags_folder=REPO / "dags",
                                    port=port, triggerer=True, env={
                                        TABLES_CONFIG_ENV: str(self.tables_config),
                                        # the connection form's Test button (ZookeeperLockHook.test_connection)
                                        "AIRFLOW__CORE__TEST_CONNECTION": "Enabled",
                                        "AIRFLOW_CONN_SPARK_DEFAULT": json.dumps(
                                            {"conn_type": "spark", "host": "local[2]"}),
                                        # every task's OpenLineage events, one JSON line each (with
                                        # Airflow's OpenLineage provider: `pip install hudi-ops[openlineage]`)
                                        "AIRFLOW__OPENLINEAGE__TRANSPORT": json.dumps(
                                            {"type": "file", "log_file_path": str(self.lineage_file),
                                             "append": True}),
                                        "AIRFLOW__OPENLINEAGE__NAMESPACE": "hudi-ops",
                                    })

    def start(self) -> Platform:
        try:
            if self.metastore is not None:
                self.metastore.launch()  # its database readies while the others start
            self.zookeeper.start()
            if self.kafka is not None:
                self.kafka.start()
                for topic in self.topics:
                    self.kafka.create_topic(topic)
                self.airflow.settings[f"AIRFLOW_CONN_{DEFAULT_KAFKA_CONN_ID.upper()}"] = json.dumps(
                    {"conn_type": "kafka", "extra": {"bootstrap.servers": self.kafka.bootstrap_servers,
                                                     "group.id": TRIGGER_GROUP, "auto.offset.reset": "earliest"}})
            if self.metastore is not None:
                self.metastore.wait_ready()
                self.airflow.settings[f"AIRFLOW_CONN_{METASTORE_CONN_ID.upper()}"] = json.dumps(
                    {"conn_type": "hive_metastore", "host": "127.0.0.1", "port": self.metastore.port})
            self.airflow.settings["AIRFLOW_CONN_HUDI_ZOOKEEPER_DEFAULT"] = json.dumps(
                {"conn_type": "hudi_zookeeper", "host": self.zookeeper.host, "port": self.zookeeper.port,
                 "extra": {"base_path": LOCK_BASE_PATH}})
            self.airflow.start()
        except BaseException:
            self.stop()
            raise
        return self

    def dead_component(self) -> str | None:
        """A component that exited on its own, if one did."""
        if not self.zookeeper.running:
            return "zookeeper"
        if self.kafka is not None and not self.kafka.running:
            return "kafka broker"
        if self.metastore is not None and not self.metastore.running:
            return "hive metastore"
        return self.airflow.dead_component()

    def stop(self) -> None:
        self.airflow.stop()
        if self.kafka is not None:
            self.kafka.stop()
        if self.metastore is not None:
            self.metastore.stop()
        self.zookeeper.stop()

    def __enter__(self) -> Platform:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m local_platform.platform", description=__doc__.split("\n")[0])
    parser.add_argument("--port", type=int, default=int(os.environ.get("HUDI_OPS_AIRFLOW_PORT", DEFAULT_PORT)),
                        help=f"the api-server's port on 127.0.0.1 (default {DEFAULT_PORT})")
    parser.add_argument("--home", type=Path, default=Path(".demo/up"),
                        help="where Airflow's database, ZooKeeper's data and the example table live")
    args = parser.parse_args(argv)
    logging.getLogger("kazoo").setLevel(logging.ERROR)
    home = args.home.resolve()
    try:
        require_zookeeper()
        platform = Platform(home, chosen_tables_config(home), port=args.port)
    except ConfigError as e:
        print(f"make up: {e}", file=sys.stderr)
        return 2
    stop = stop_signals()
    print(f"starting the platform in {home} ...", flush=True)
    # the example tables are live: sample files land in a source folder, messages go to a topic
    feed = SampleFeed(Path(platform.example_source)) if platform.example_source else None
    stream = None
    with platform:
        _ready(platform)
        if feed is not None:
            feed.start()
            print(f"example table trips: a file of sample trips lands in {feed.landing} every "
                  f"{feed.every_s / 60:g} minutes; its ingest runs on `{EXAMPLE_INGEST_SCHEDULE}`", flush=True)
        if platform.example_stream and platform.kafka is not None:
            stream = SampleStream(platform.kafka.bootstrap_servers, EXAMPLE_TOPIC).start()
            print(f"example table trips_stream: sample trips go to topic {EXAMPLE_TOPIC} every "
                  f"{stream.every_s:g} s; its ingest runs on new messages, and at least on "
                  f"`{EXAMPLE_STREAM_SCHEDULE}`", flush=True)
        try:
            while not stop.wait(_CHECK_EVERY_S):
                dead = platform.dead_component()
                if dead:
                    print(f"the {dead} exited; stopping everything (its log is in {home})", file=sys.stderr,
                          flush=True)
                    return 1
        finally:
            for sample in (feed, stream):
                if sample is not None:
                    sample.stop()
        print("stopping ...", flush=True)
    print("stopped", flush=True)
    return 0


def stop_signals() -> threading.Event:
    """An event set by Ctrl-C (SIGINT), SIGTERM or a closed terminal (SIGHUP): what ends a platform left
    up. Its components run in sessions of their own, so none of these reaches them but through us."""
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, lambda *_: stop.set())
    return stop


def _ready(platform: Platform) -> None:
    airflow = platform.airflow
    lines: list[str] = [
        f"Airflow is up: {airflow.url}  (log in as {airflow.USER} / {airflow.password}; a new password each start)",
        f"ZooKeeper on {platform.zookeeper.url} (connection hudi_zookeeper_default)",
        *([f"Kafka on {platform.kafka.bootstrap_servers} (connection kafka_default)"] if platform.kafka else []),
        *([f"Hive Metastore on {platform.metastore.uri} (connection {METASTORE_CONN_ID}): "
           f"spark.hadoop.hive.metastore.uris={platform.metastore.uri} reads its tables by name"]
          if platform.metastore else []),
        f"tables config: {platform.tables_config}",
        *(f"  table {name}: {entry.base_path}   timeline view: {airflow.url}/hudi-ops/tables/{name}"
          for name, entry in platform.tables.items()),
        *(f"  refused, no DAGs: {reason}" for reason in platform.refused.values()),
        f"OpenLineage events of every task: {platform.lineage_file}",
        "Ctrl-C stops everything.",
    ]
    print("\n".join(lines), flush=True)


if __name__ == "__main__":
    sys.exit(main())
