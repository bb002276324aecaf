"""RFC-22 on one machine: a Kafka stream's ingestion and two backfills write one Hudi table at once, through Airflow.

`python -m local_platform.demo` (`make demo`) starts a local ZooKeeper, a Kafka broker, a Hive Metastore and
Airflow (loopback only), produces trips to the topic `trips` and writes the backfills' source files, and runs the repo's
DAGs for a `trips` table partitioned by day. RFC-22's first writer "is continuously ingesting new data",
Kafka's here:

1. an ingest run takes the topic's first messages (days 2026-11-20 and -21);
2. more messages (updates to both days and a new day) arrive, and three runs are triggered together:
   that ingest run, a backfill of corrections to 2026-11-20..21 (the same file groups) and a backfill
   of 2026-11-10..11 (partitions no one else writes);
3. the table's services DAG runs Hudi's compaction (scheduled by one task, executed by the next) and
   a clean that removes the slices the compaction superseded.

The table is registered in the demo's Hive Metastore (`lake.trips_ro`, `lake.trips_rt`) after every
commit. Every write is Apache Hudi's, in a spark-submit per Airflow task (the ingest's reads its offsets with
Spark's Kafka reader and commits them as HoodieStreamer's checkpoint), and takes the table's ZooKeeper
lock (Hudi's ZookeeperBasedLockProvider) to start and to commit. The demo holds that same lock from
Python, as a long table service would, until all three Java writers wait for it to start their writes
(each job's batch fence, which waits for it first, let through): then their writes overlap for certain,
however slow the machine, and the rule of RFC-22 must decide. The ingest and the
overlapping backfill touch the same file groups, so whichever commits second fails with Hudi's write
conflict (exit 3) and Airflow retries it. The table is MERGE_ON_READ, so the writers' updates go to
log files until the compaction. Finally the table is read back with hudi-rs and compared with the
rows expected from the sources.
"""

from __future__ import annotations

import argparse
import json
import logging
import shutil
import signal
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import yaml

from hudi_ops.airflow.dag_factory.factory import backfill_dag_id, ingest_dag_id, services_dag_id
from hudi_ops.airflow.hooks.aws import aws_connection
from hudi_ops.airflow.hooks.hive_metastore import DEFAULT_CONN_ID as METASTORE_CONN_ID
from hudi_ops.airflow.hooks.kafka import DEFAULT_CONN_ID as DEFAULT_KAFKA_CONN_ID
from hudi_ops.errors import ConfigError
from hudi_ops.format.instant import Action
from hudi_ops.format.meta_client import MetaClient
from hudi_ops.locks.held_lock import HeldLock
from hudi_ops.options.occ import zookeeper_lock_options
from hudi_ops.read.service_history import CleanSummary, cleans
from hudi_ops.read.table_overview import COMPLETED, PENDING, TableOverview
from hudi_ops.s3_settings import S3Settings
from hudi_ops.spark.launch import LOOPBACK_CONF
from local_platform.hive_metastore import HiveMetastoreServer, pyspark_jars
from local_platform.kafka_server import KafkaServer, produce_json, require_kafka
from local_platform.local_airflow import LocalAirflow
from local_platform.platform import stop_signals
from local_platform.s3_server import S3Server
from local_platform.zookeeper_server import ZookeeperServer, require_zookeeper

REPO = Path(__file__).resolve().parents[2]
TABLE = TOPIC = "trips"
DATABASE = "lake"
INGEST_DAG, BACKFILL_DAG, SERVICES_DAG = ingest_dag_id(TABLE), backfill_dag_id(TABLE), services_dag_id(TABLE)
LOCK_BASE_PATH = "/hudi/locks"
#: with --s3: the bucket of the table, and the aws connection its DAGs reach it with
S3_BUCKET, S3_CONN_ID = "lake", "hudi_ops_s3"
SPARK_CONF = {**LOOPBACK_CONF,
              "spark.driver.memory": "768m"}
SEED_DAYS = ("2026-11-20", "2026-11-21")
NEW_DAY = "2026-11-22"
OLD_DAYS = ("2026-11-10", "2026-11-11")


# -- source data ----------------------------------------------------------------------------------

SCHEMA = pa.schema([("trip_id", pa.string()), ("dt", pa.string()), ("ts", pa.int64()), ("fare", pa.float64()),
                    ("city", pa.string())])


def _trips(day: str, ids: range, *, ts: int, fare: float) -> list[dict[str, Any]]:
    return [{"trip_id": f"{day}-{i:04d}", "dt": day, "ts": ts, "fare": round(fare + i * 0.25, 2),
             "city": ("sf", "nyc", "chennai")[i % 3]} for i in ids]


def _write(rows: list[dict[str, Any]], path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pylist(rows, schema=SCHEMA), path)


@dataclass
class Sources:
    """The four batches, and what the table must hold once all are written, in any order: per trip
    the row with the greatest `ts` (the table's ordering field)."""

    seed: list[dict[str, Any]] = field(default_factory=list)
    update: list[dict[str, Any]] = field(default_factory=list)
    corrections: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    old: dict[str, list[dict[str, Any]]] = field(default_factory=dict)

    @classmethod
    def generate(cls) -> Sources:
        s = cls()
        for day in SEED_DAYS:
            s.seed += _trips(day, range(300), ts=1_000, fare=10.0)
            s.update += _trips(day, range(0, 80, 2), ts=3_000, fare=20.0)  # ingestion's late updates
            # corrections of an overlapping set of trips (ts between the two) and 20 trips never ingested
            s.corrections[day] = _trips(day, range(40, 100), ts=2_000, fare=15.0) + \
                _trips(day, range(300, 320), ts=2_000, fare=15.0)
        s.update += _trips(NEW_DAY, range(100), ts=3_000, fare=12.0)
        for day in OLD_DAYS:
            s.old[day] = _trips(day, range(150), ts=500, fare=8.0)
        return s

    def expected(self) -> dict[str, tuple[str, int, float]]:
        rows = [*self.seed, *self.update, *(r for d in (self.corrections, self.old) for v in d.values() for r in v)]
        best: dict[str, dict[str, Any]] = {}
        for r in rows:
            if r["trip_id"] not in best or r["ts"] > best[r["trip_id"]]["ts"]:
                best[r["trip_id"]] = r
        return {k: (r["dt"], r["ts"], r["fare"]) for k, r in best.items()}


# -- the scenario ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class RunReport:
    name: str
    dag_id: str
    run_id: str
    state: str
    tries: int
    conflicts: tuple[str, ...]  # the retried failures' reasons, one per failed try


@dataclass(frozen=True)
class ServicesReport:
    state: str
    tasks: dict[str, str]  # task id -> state
    compaction: str | None  # the compaction's instant
    clean: CleanSummary | None

    @property
    def ok(self) -> bool:
        return self.state == "success" and self.compaction is not None and self.clean is not None


@dataclass(frozen=True)
class Report:
    runs: tuple[RunReport, ...]
    services: ServicesReport
    overview: TableOverview
    expected_rows: int
    rows: int
    distinct_keys: int
    missing: int
    wrong: int

    @property
    def writers(self) -> dict[str, str]:
        """commit instant -> the pipeline that wrote it"""
        return {s.requested_time: s.pipeline for s in self.overview.instants if s.pipeline}

    @property
    def table_ok(self) -> bool:
        return self.rows == self.distinct_keys == self.expected_rows and not self.missing and not self.wrong

    @property
    def ok(self) -> bool:
        return self.table_ok and all(r.state == "success" for r in self.runs) and self.services.ok


class Rfc22Demo:
    """`s3`: the table on this local S3 server (bucket `lake`), reached through an aws connection."""

    def __init__(self, root: Path, *, say: Callable[[str], None] = print, s3: S3Server | None = None) -> None:
        self.root, self.say, self.s3_server = Path(root), say, s3
        self.table_path: Path | str = f"s3a://{S3_BUCKET}/warehouse/{TABLE}" if s3 else self.root / "warehouse" / TABLE
        self.history = self.root / "history" / TABLE
        self.sources = Sources.generate()

    @property
    def s3(self) -> S3Settings | None:
        """The S3 server's settings, once it runs (its endpoint is known from then on)."""
        return self.s3_server.settings() if self.s3_server else None

    def tables_config(self) -> dict[str, Any]:
        return {
            "defaults": {"spark_conn_id": "spark_default", "zookeeper_conn_id": "hudi_zookeeper_default",
                         "spark_conf": SPARK_CONF},
            "tables": {TABLE: {
                "base_path": str(self.table_path), "record_key": "trip_id", "partition_field": "dt",
                "ordering_field": "ts", "table_type": "MERGE_ON_READ",
                **({"aws_conn_id": S3_CONN_ID} if self.s3 else {}),
                "hoodie_conf": {
                    # writers wait in line for the lock while the demo holds it
                    "hoodie.write.lock.wait_time_ms": "300000",
                    # a failed write's heartbeat expires within seconds, so the next writer rolls it
                    # back (LAZY) while the demo still runs; Hudi's default waits two minutes
                    "hoodie.client.heartbeat.interval_in_ms": "5000",
                },
                # kafka_default: the demo's broker (make up's, when it serves this config)
                "ingest": {"source_kind": "kafka", "kafka_topic": TOPIC, "schedule": None},
                # registered in the demo's Hive Metastore (make up's) after each commit: lake.trips_ro, _rt
                # (not for a table on S3: the metastore has no s3a connector)
                **({} if self.s3 else {"catalog": {"database": DATABASE}}),
                "backfill": {"source_path": str(self.history), "max_active_runs": 2},
                # no schedule: triggered by the writers' commits (paused here until step 3) and by hand
                "services": {
                    "compaction": {"hoodie.compact.inline.max.delta.commits": "3"},
                    "clean": {"hoodie.cleaner.policy": "KEEP_LATEST_FILE_VERSIONS",
                              "hoodie.cleaner.fileversions.retained": "1"},
                },
            }},
        }

    def write_tables_config(self) -> Path:
        config = self.root / "tables.yaml"
        config.write_text(yaml.safe_dump(self.tables_config(), sort_keys=False))
        return config

    def airflow(self, zookeeper: ZookeeperServer, kafka: KafkaServer, metastore: HiveMetastoreServer) -> LocalAirflow:
        config = self.write_tables_config()
        return LocalAirflow(self.root / "airflow", dags_folder=REPO / "dags", env={
            "HUDI_OPS_TABLES_CONFIG": str(config),
            "AIRFLOW_CONN_SPARK_DEFAULT": json.dumps({"conn_type": "spark", "host": "local[1]"}),
            "AIRFLOW_CONN_HUDI_ZOOKEEPER_DEFAULT": json.dumps(
                {"conn_type": "hudi_zookeeper", "host": zookeeper.host, "port": zookeeper.port,
                 "extra": {"base_path": LOCK_BASE_PATH}}
            ),
            f"AIRFLOW_CONN_{DEFAULT_KAFKA_CONN_ID.upper()}": json.dumps(
                {"conn_type": "kafka", "extra": {"bootstrap.servers": kafka.bootstrap_servers}}),
            f"AIRFLOW_CONN_{METASTORE_CONN_ID.upper()}": json.dumps(
                {"conn_type": "hive_metastore", "host": "127.0.0.1", "port": metastore.port}),
            **({f"AIRFLOW_CONN_{S3_CONN_ID.upper()}": json.dumps(aws_connection(self.s3))} if self.s3 else {}),
        })

    def run(self, airflow: LocalAirflow, zookeeper: ZookeeperServer, kafka: str) -> Report:
        """`kafka`: the broker's bootstrap servers, where the topic `trips` is."""
        s = self.sources
        seed = self.seed(airflow, kafka)
        produce(kafka, s.update)
        runs = [
            ("ingest (new messages)", INGEST_DAG, "ingest_2", None),
            ("backfill 2026-11-20..21", BACKFILL_DAG, "backfill_corrections",
             {"start": SEED_DAYS[0], "end": SEED_DAYS[1], "source_path": str(self.history)}),
            ("backfill 2026-11-10..11", BACKFILL_DAG, "backfill_old_days",
             {"start": OLD_DAYS[0], "end": OLD_DAYS[1], "source_path": str(self.history)}),
        ]
        self.say("2. three runs at once: " + "; ".join(name for name, *_ in runs))
        with self._table_lock(zookeeper) as lock:
            for _, dag_id, run_id, conf in runs:
                airflow.trigger(dag_id, run_id, conf)
            lock.line_up_writers(len(runs))
            self.say(f"   all {len(runs)} writers wait for the table's ZooKeeper lock to start: releasing it")
        airflow.wait_for_runs([(d, r) for _, d, r, _ in runs])
        reports = tuple(self._run_report(airflow, *run[:3]) for run in [seed, *runs])

        self.say(f"3. {SERVICES_DAG}: Hudi's compaction of the logs, then a clean of the slices it superseded")
        airflow.trigger(SERVICES_DAG, "services_1")
        airflow.client.set_paused(SERVICES_DAG, False)
        airflow.wait_for_runs([(SERVICES_DAG, "services_1")])
        airflow.client.set_paused(SERVICES_DAG, True)  # the checks that follow see only their own writes
        return self._check(reports, self._services_report(airflow, "services_1"))

    def seed(self, airflow: LocalAirflow, kafka: str) -> tuple[str, str, str]:
        """Step 1 alone: the backfills' source folders written, the services paused, the topic's first
        messages ingested by a run of the ingest DAG; that run's (name, DAG, run id)."""
        s = self.sources
        produce(kafka, s.seed)
        for day, rows in (*s.corrections.items(), *s.old.items()):
            _write(rows, self.history / f"dt={day}" / "part-0000.parquet")
        airflow.wait_for_dags([INGEST_DAG, BACKFILL_DAG, SERVICES_DAG])
        # the services wait for step 3, so that the writers' overlap is RFC-22's alone
        airflow.client.set_paused(SERVICES_DAG, True)

        self.say(f"1. {INGEST_DAG}: the topic's first messages ({len(s.seed)} trips of {', '.join(SEED_DAYS)})")
        seed = ("ingest (first messages)", INGEST_DAG, "ingest_1")
        airflow.trigger(INGEST_DAG, seed[2])
        airflow.wait_for_runs([seed[1:]])
        return seed

    def _services_report(self, airflow: LocalAirflow, run_id: str) -> ServicesReport:
        listed = airflow.api("GET", f"/api/v2/dags/{SERVICES_DAG}/dagRuns/{run_id}/taskInstances")
        tasks = {t["task_id"]: t["state"] for t in listed["task_instances"]}
        meta = MetaClient.open(self.table_path, s3=self.s3)
        compactions = [i.requested_time for i in meta.timeline().completed if i.action == Action.COMMIT]
        done = cleans(meta, latest=1)
        return ServicesReport(airflow.run_state(SERVICES_DAG, run_id), tasks, compactions[-1] if compactions else None,
                              done[-1] if done else None)

    def _table_lock(self, zookeeper: ZookeeperServer) -> HeldLock:
        options = zookeeper_lock_options(zookeeper.host, zookeeper.port, {"base_path": LOCK_BASE_PATH}, TABLE)
        return HeldLock({**options, "hoodie.write.lock.wait_time_ms": "30000"}, TABLE)

    @staticmethod
    def _run_report(airflow: LocalAirflow, name: str, dag_id: str, run_id: str) -> RunReport:
        task_id = "ingest" if dag_id == INGEST_DAG else "backfill"
        ti = airflow.task_instance(dag_id, run_id, task_id)
        tries = int(ti["try_number"])
        conflicts = tuple(_failure_reason(airflow.task_log(dag_id, run_id, task_id, n)) for n in range(1, tries))
        return RunReport(name, dag_id, run_id, airflow.run_state(dag_id, run_id), tries, conflicts)

    def _check(self, runs: tuple[RunReport, ...], services: ServicesReport) -> Report:
        import hudi

        options = self.s3.hudi_rs_options() if self.s3 else {}
        table = pa.Table.from_batches(hudi.HudiTable(str(self.table_path), options).read())
        rows = table.select(["trip_id", "dt", "ts", "fare"]).to_pylist()
        got = {r["trip_id"]: (r["dt"], r["ts"], r["fare"]) for r in rows}
        expected = self.sources.expected()
        overview = TableOverview.load(self.table_path, s3=self.s3)
        return Report(
            runs=runs, services=services, overview=overview, expected_rows=len(expected),
            rows=len(rows), distinct_keys=len(got), missing=len(expected.keys() - got.keys()),
            wrong=sum(1 for k, v in got.items() if expected.get(k) != v),
        )


def produce(bootstrap_servers: str, rows: list[dict[str, Any]]) -> None:
    """Trips as JSON messages of the topic, keyed by trip."""
    produce_json(bootstrap_servers, TOPIC, rows, key="trip_id")


def _failure_reason(log: str) -> str:
    for marker in ("write conflict (exit 3)", "concurrent job (exit 3)", "lock timeout (exit 4)"):
        at = log.find(marker)
        if at >= 0:
            return log[at:].splitlines()[0][:300]
    return "failed (see the task log)"


# -- printing -------------------------------------------------------------------------------------

def print_report(report: Report, say: Callable[[str], None] = print) -> None:
    say("\n== runs")
    for r in report.runs:
        say(f"   {r.name:26} {r.state:8} after {r.tries} {'try' if r.tries == 1 else 'tries'}")
    say("\n== conflicts retried by Airflow")
    retried = [(r, c) for r in report.runs for c in r.conflicts]
    for r, reason in retried:
        say(f"   {r.name}: {reason}")
    if not retried:
        say("   none")
    services = report.services
    say(f"\n== table services ({services.state})")
    for task, state in sorted(services.tasks.items()):
        say(f"   {task:20} {state}")
    say(f"   compaction {services.compaction or 'none'}")
    clean = services.clean
    say(f"   clean {clean.instant}: {clean.policy}, {clean.files} file(s), {clean.bytes} bytes removed"
        if clean else "   no clean")
    say("\n== timeline (requested -> completed; one column is 1/60 of the whole)")
    spans = report.overview.instants
    if spans:
        start = spans[0].requested_at
        ends = [s.completed_at or s.rolled_back_at or s.requested_at for s in spans]
        scale = max(max(ends) - start, timedelta(seconds=1)) / 60
        for span, end in zip(spans, ends, strict=True):
            begin = int((span.requested_at - start) / scale)
            bar = " " * begin + "#" * max(int((end - span.requested_at) / scale), 1)
            status = "" if span.status == COMPLETED else \
                f"  ({span.state if span.status == PENDING else span.status})"
            writer = span.pipeline or span.action
            say(f"   {span.requested_time} {writer:22} {(end - span.requested_at).total_seconds():6.1f}s "
                f"|{bar:<61}|{status}")
    say("\n== hudi-rs reads the table")
    say(f"   {report.rows} rows, {report.distinct_keys} distinct trips, {report.expected_rows} expected; "
        f"{report.missing} missing, {report.wrong} with a wrong value")
    say(f"   check {'passed' if report.table_ok else 'FAILED'}")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m local_platform.demo", description=__doc__.split("\n")[0])
    parser.add_argument("--keep", action="store_true", help="keep the demo's folder (table, logs) at the end")
    parser.add_argument("--up", action="store_true", help="leave Airflow up after the demo, until Ctrl-C")
    parser.add_argument("--s3", action="store_true", help="the table on a local S3 server (moto's), through s3a")
    args = parser.parse_args(argv)
    # SIGTERM (a closed terminal, `kill`) unwinds like Ctrl-C, so that what the demo started stops too:
    # Airflow and ZooKeeper run in sessions of their own, which no signal to the demo reaches
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(128 + signal.SIGTERM))
    keep = args.keep
    # Airflow's logging set-up would show kazoo's INFO lines, and its warnings while ZooKeeper starts
    logging.getLogger("kazoo").setLevel(logging.ERROR)
    try:
        require_zookeeper()
        require_kafka()
        pyspark_jars()
    except ConfigError as e:
        print(f"the demo needs ZooKeeper, Kafka and PySpark's Hive jars: {e}", file=sys.stderr)
        return 2
    root = Path(tempfile.mkdtemp(prefix="hudi-ops-demo-"))
    s3 = S3Server() if args.s3 else None
    demo = Rfc22Demo(root, s3=s3)
    zookeeper, kafka = ZookeeperServer(root / "zookeeper"), KafkaServer(root / "kafka")
    metastore = HiveMetastoreServer(root / "hive_metastore")
    try:
        metastore.launch()  # its database readies while the others start
        if s3:
            s3.start().create_bucket(S3_BUCKET)
            print(f"S3 server (moto's) on {s3.endpoint}, bucket {S3_BUCKET}")
        zookeeper.start()
        kafka.start()
        kafka.create_topic(TOPIC)
        metastore.wait_ready()
        print(f"ZooKeeper on {zookeeper.url}, Kafka on {kafka.bootstrap_servers} (topic {TOPIC}), a Hive Metastore "
              f"on {metastore.uri}; starting Airflow (api-server, scheduler, dag-processor)...")
        with demo.airflow(zookeeper, kafka, metastore) as airflow:
            print(f"Airflow on {airflow.url} (loopback; log in as {airflow.USER} / {airflow.password});"
                  f" the table is {demo.table_path}")
            print(f"   the timeline view: {airflow.url}/hudi-ops/tables/{TABLE}")
            report = demo.run(airflow, zookeeper, kafka.bootstrap_servers)
            print_report(report)
            if args.up:
                print(f"\nAirflow stays up on {airflow.url} (log in as {airflow.USER} / {airflow.password}); "
                      "Ctrl-C stops it", flush=True)
                stop_signals().wait()
        return 0 if report.ok else 1
    finally:
        kafka.stop()
        metastore.stop()
        zookeeper.stop()
        if s3:
            s3.stop()
        if keep:
            print(f"kept {root}")
        else:
            shutil.rmtree(root, ignore_errors=True)
