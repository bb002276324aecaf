"""A chaos run: RFC-22's pipelines on one MERGE_ON_READ table at once, each job a real spark-submit
under the ZooKeeper lock, while the harness kills jobs and restarts ZooKeeper, and makes the faults an
orchestrator makes: it kills a job's Airflow task process but not its spark-submit (the orphan lives
on, in client mode until its driver sees its task gone, in cluster mode to its end, while its retry
runs), triggers a running backfill window a second time, and lands ingest files with modification
times older than the checkpoint and while an ingest runs.

Pipelines: a steady ingest (one landing file per batch), a stream (a Kafka-fed ingest: each batch's
rows produced to a topic, then an ingest of the topic, while the harness kills the broker and starts it
again), two day-by-day backfills whose windows
overlap each other and the ingest's days (and share a few keys: corrections of the same old trips,
which a first writer commits beside the ingest), and the table services as the services DAG runs
them (a Python check first, a job only when there is work). Each job is re-run as Airflow would: a
kill, exit 3 (conflict), 4 (lock) and 5 (the broker did not answer) are retried with backoff; exit 1
or 2 stops the run as a finding.

Every row carries its batch, and every batch a unique ordering value, so the model is the batches
applied by ordering field whatever order they committed in. Snapshots read with hudi-rs during the
run must hold no key twice and no row of a batch whose commit had not completed; at the end the
table must equal the model in hudi-rs and Spark's reader, with every failed write rolled back, every
plan executed once, every committed file present (and named by the metadata table, which the control
plane reads) and no lock node left.

Kills are classified after the fact: the killed writer's instant is the pending one whose heartbeat
stopped at the kill; markers under `.hoodie/.temp/<instant>` mean it had started writing data files;
its batch on the timeline means the kill came during or after the commit.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import posixpath
import random
import re
import signal
import subprocess
import threading
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa

from hudi_ops.errors import JobEndedError, TableNotFoundError
from hudi_ops.format import meta_client
from hudi_ops.format.file_names import BaseFileName
from hudi_ops.format.instant import Action
from hudi_ops.format.meta_client import MetaClient
from hudi_ops.format.plans import CleanMetadata
from hudi_ops.job_specs import (
    ArchiveSpec,
    BackfillSpec,
    CleanSpec,
    ClusterSpec,
    CompactSpec,
    IngestSpec,
    ServiceSpec,
    WriteSpec,
)
from hudi_ops.read.pending_plans import pending_plans, pending_writes
from hudi_ops.read.pipeline_metadata import BACKFILL_CHECKPOINT_KEY, INGEST_CHECKPOINT_KEY
from hudi_ops.read.table_services import ARCHIVE, CLEAN, CLUSTERING, COMPACTION, SERVICES, inline_off
from hudi_ops.sources.kafka import STREAMER_CHECKPOINT_KEY_V2, KafkaOffsets, watermarks
from hudi_ops.spark.driver_lifetime import TASK_PROCESS_ENV, task_process
from hudi_ops.spark.kafka_connector import kafka_jars
from tests.integration.lock_options import HEARTBEAT, occ_options
from tests.integration.processes import Job
from tests.tables import (
    Model,
    files_by_listing,
    files_by_metadata_table,
    read_hudi_rs,
    read_spark,
    write_source,
)

SCHEMA = pa.schema([("trip_id", pa.string()), ("dt", pa.string()), ("ts", pa.int64()), ("fare", pa.float64()),
                    ("batch", pa.string())])
COLUMNS = tuple(SCHEMA.names)
#: the backfills' files lack `dt`: the folder names the day
HISTORY_SCHEMA = SCHEMA.remove(SCHEMA.get_field_index("dt"))
DAYS = tuple(f"2026-10-{d:02d}" for d in range(1, 13))
#: the backfills' days in the order they run them: both start in their overlap, which the ingest writes too
WINDOWS = {"backfill-a": DAYS[7::-1], "backfill-b": DAYS[4:12]}
INGEST_DAYS = DAYS[6:10]
TABLE = "trips"
#: the old trips the backfills correct (one ingest, which the backfills wait for): a correction is then
#: an update, which OCC checks; two writers inserting one new key at once may both commit it
#: (README, "New keys from two writers at once")
OLD_TRIPS, OLD_TRIPS_PER_DAY = "old-trips", 3
#: the writers: the landing folder's ingest, the Kafka-fed one and the backfills
WRITERS = ("ingest", "stream", *WINDOWS)
PIPELINES = (*WRITERS, "services")
STREAM_TOPIC, STREAM_PARTITIONS = "chaos-trips", 3
#: a killed write's heartbeat has surely expired this long after its last beat (the tests' HEARTBEAT)
HEARTBEAT_EXPIRY_S = (int(HEARTBEAT["hoodie.client.heartbeat.interval_in_ms"]) / 1000
                      * (int(HEARTBEAT["hoodie.client.heartbeat.tolerable.misses"]) + 1) + 1.0)
#: what the services DAG sets: compaction after two delta commits, cleans keeping four commits
SERVICE_CONF = {"hoodie.compact.inline.max.delta.commits": "2", "hoodie.cleaner.commits.retained": "4"}
RETRYABLE = (3, 4, 5)
#: of the plan executions, the share started twice at once
RACED_PLANS = 0.3
#: longer than any job takes on two loaded cores: a job still running then hangs, a finding
JOB_TIMEOUT_S = 900.0
#: what Hudi logs (INFO) when a writer has taken the table lock to commit its instant (the metadata
#: table's own first instants, 00000000000000000 and on, are not the data write's)
COMMIT_LOCK_TAKEN = re.compile(r"State change started for Option\{val=\[==>(?!0{6})\d+__(?:delta)?commit__INFLIGHT")
#: the kill phases, as the run classifies them
DURING_COMMIT = "during the commit (table lock held)"
#: a backfill window's second run is named by the first's batch and this
AGAIN = "+again"


@dataclass(frozen=True)
class ChaosSize:
    commits: int = 20  # per pipeline: batches of each writer, completed services at least as many
    rows: int = 6  # per batch
    zookeeper_restarts: int = 2
    broker_restarts: int = 2  # a kill -9 of the Kafka broker, then a start
    #: jobs started between kills (about one job in four dies, as in the runs that found the issues), counted
    #: in jobs, not seconds, so a slower machine draws the same number of kills; None: no kills (the
    #: contention run: the same pipelines, where every retry is a refusal by Hudi)
    kill_every: tuple[int, int] | None = (2, 6)
    #: after a kill falls due, how long the victims may still work: kills land before, among and after
    #: their data files
    kill_delay_s: tuple[float, float] = (0.0, 30.0)
    max_tries: int = 30  # a batch that needs more has starved: a finding
    #: completed compactions, clusterings and cleans the services pipeline must reach (default: `commits`)
    service_commits: int | None = None
    #: of the kills, the share aimed at a writer in its commit (it holds the table lock for it)
    at_commit: float = 0.3
    #: the orchestrator's faults: of the kills of a writer, the share that kill its task process only;
    #: of the backfill batches, the share whose window is triggered again while it runs; of the ingest
    #: files, the shares landed older than the checkpoint and while the ingest before runs
    orphans: float = 0.35
    twice: float = 0.25
    late: float = 0.3
    during: float = 0.3

    @property
    def services_needed(self) -> int:
        return self.commits if self.service_commits is None else self.service_commits

    @classmethod
    def core(cls) -> ChaosSize:
        """The small run in `make test`."""
        return cls(commits=2, rows=4, zookeeper_restarts=1, broker_restarts=1, service_commits=1)


class ChaosFailure(AssertionError):
    """The run found a problem: the message says what and where (job logs are kept)."""


@dataclass
class Running:
    job: Job
    pipeline: str
    batch: str
    started: float  # time.time()
    killed: bool = False
    #: a writer's Airflow task process (a stand-in: killing it leaves spark-submit running)
    task: subprocess.Popen[bytes] | None = None
    orphaned: bool = False  # its task process was killed: the harness retries, the job lives on


@dataclass
class Figures:
    seed: int
    jobs: int = 0
    #: writers: batches found committed on the timeline at the end; services: completed plans and cleans
    commits: Counter[str] = field(default_factory=Counter)
    done: Counter[str] = field(default_factory=Counter)  # writers' batches whose job has succeeded
    tries: dict[str, list[int]] = field(default_factory=lambda: defaultdict(list))
    kills: Counter[str] = field(default_factory=Counter)
    retried: Counter[str] = field(default_factory=Counter)  # by the error's class
    zookeeper_restarts: int = 0
    broker_restarts: int = 0
    #: orphaned attempts, windows triggered twice, files landed late or during a run
    faults: Counter[str] = field(default_factory=Counter)
    snapshots: int = 0
    #: snapshots hudi-rs could not read while Hudi rewrote hoodie.properties (`_properties_being_rewritten`)
    snapshots_unreadable: int = 0
    rows_checked: int = 0
    lost: int = 0
    doubled: int = 0
    failed_writes_rolled_back: int = 0
    plans_executed: Counter[str] = field(default_factory=Counter)
    #: `<service> <instant>` -> how the jobs that ran that plan ended (`completed`, `completed by another run`)
    plan_outcomes: dict[str, Counter[str]] = field(default_factory=lambda: defaultdict(Counter))
    plans_raced: int = 0  # plans two executors were started on at once
    #: clustering plans withdrawn after losing to a writer at their commit (ingestion first)
    plans_withdrawn: set[str] = field(default_factory=set)
    #: the harness's control-plane checks that listed the table because its metadata table could not be
    #: read: a file its cleaner removed meanwhile is a race; anything else, a state the reader cannot read
    metadata_table_fallbacks: Counter[str] = field(default_factory=Counter)
    seconds: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "seed": self.seed, "seconds": round(self.seconds), "jobs": self.jobs, "commits": dict(self.commits),
            "kills": sum(self.kills.values()), "kills_by_phase": dict(self.kills),
            "zookeeper_restarts": self.zookeeper_restarts, "broker_restarts": self.broker_restarts,
            "kafka_batches": self.commits["stream"], "orchestrator_faults": dict(self.faults),
            "conflicts_retried": sum(n for k, n in self.retried.items() if k != "LockAcquisitionError"),
            "lock_waits": self.retried["LockAcquisitionError"], "retried_by_error": dict(self.retried),
            "tries_per_batch": {p: {"max": max(t), "mean": round(sum(t) / len(t), 2),
                                    "batches_by_tries": dict(sorted(Counter(t).items()))}
                                for p, t in sorted(self.tries.items()) if t},
            "failed_writes_rolled_back": self.failed_writes_rolled_back,
            "plans_executed": dict(self.plans_executed), "plans_raced": self.plans_raced,
            "plans_withdrawn": len(self.plans_withdrawn),
            "metadata_table_fallbacks": dict(self.metadata_table_fallbacks),
            "snapshots": self.snapshots, "snapshots_unreadable": self.snapshots_unreadable,
            "rows_checked": self.rows_checked, "lost": self.lost, "doubled": self.doubled,
        }


class ChaosRun:
    """`ChaosRun(workdir, zookeeper, kafka, seed, size).run(spark)` returns the figures or raises ChaosFailure
    (`zookeeper` and `kafka`: the servers it restarts)."""

    def __init__(self, workdir: Path, zookeeper: Any, kafka: Any, seed: int, size: ChaosSize) -> None:
        self.work, self.zookeeper, self.kafka, self.size = Path(workdir), zookeeper, kafka, size
        # one generator per thread, so that a seed repeats each pipeline's data and the chaos's schedule
        # (backoff jitter has its own: how often a job is retried must not change the data of later batches)
        self.seed = seed
        self.rng = {name: random.Random(f"{seed}:{name}")
                    for name in (*PIPELINES, "killer", "snapshots", "zookeeper", "broker", "backoff")}
        self.table = self.work / TABLE
        self.logs = self.work / "logs"
        self.logs.mkdir(parents=True, exist_ok=True)
        self.lock_options = occ_options(zookeeper.url, f"chaos-{seed}")  # with the tests' HEARTBEAT
        self.figures = Figures(seed)
        self.model = Model()
        self.batches: dict[str, list[dict[str, Any]]] = {}
        self.committed: set[str] = set()  # batches seen on the timeline
        #: the stream's batches by the topic's end offsets once each was produced: a commit whose
        #: checkpoint reaches them took the batch
        self.stream_ends: dict[str, dict[int, int]] = {}
        self._running: dict[int, Running] = {}
        self._orphans: list[Running] = []  # attempts whose task process was killed, still running
        self._mutex = threading.Lock()
        self._stop = threading.Event()  # the chaos (kills, restarts, snapshots) ends
        self._abort = threading.Event()  # a finding: everything ends
        self._writers_done = threading.Event()
        self._old_trips_done = threading.Event()
        self._failure: BaseException | None = None

    # -- the run ---------------------------------------------------------------------------------

    def run(self, spark: Callable[[], Any]) -> Figures:
        started = time.monotonic()
        fallbacks = _Fallbacks(self.figures.metadata_table_fallbacks)
        logging.getLogger(meta_client.__name__).addHandler(fallbacks)
        try:
            return self._run(spark, started)
        finally:
            logging.getLogger(meta_client.__name__).removeHandler(fallbacks)

    def _run(self, spark: Callable[[], Any], started: float) -> Figures:
        writers = [self._thread(self._old_trips), self._thread(self._ingest), self._thread(self._stream),
                   *(self._thread(self._backfill, name) for name in WINDOWS)]
        others = [self._thread(self._services), self._thread(self._killer), self._thread(self._snapshots),
                  self._thread(self._zookeeper_restarts), self._thread(self._broker_restarts)]
        for t in (*writers, *others):
            t.start()
        for t in writers:
            t.join()
        self._writers_done.set()
        others[0].join()  # the services finish their rounds
        self._await_orphans()
        self._stop.set()
        for t in others[1:]:
            t.join()
        if self._failure is not None:
            raise self._failure
        self._finish(spark())
        self.figures.seconds = time.monotonic() - started
        return self.figures

    def _draw(self, what: str) -> random.Random:
        """The orchestrator's choice about `what` (a batch and a fault): drawn from the seed and its name
        alone, so that a seed repeats it whatever the threads' timing and the tries before it."""
        return random.Random(f"{self.seed}:{what}")

    def _thread(self, target: Callable[..., None], *args: Any) -> threading.Thread:
        def guarded() -> None:
            try:
                target(*args)
            except BaseException as e:  # the first failure stops the run; the others are its echoes
                with self._mutex:
                    self._failure = self._failure or e
                self._abort.set()
                self._stop.set()
                self._kill_all()

        return threading.Thread(target=guarded, name=f"chaos-{target.__name__}{args}", daemon=True)

    # -- writers ---------------------------------------------------------------------------------

    def _rows(self, pipeline: str, n: int, keys: list[str], days: list[str]) -> list[dict[str, Any]]:
        batch = f"{pipeline}-{n:04d}"
        ts = n * len(PIPELINES) + PIPELINES.index(pipeline)  # one per batch: the model never depends on commit order
        rng = self.rng[pipeline]
        rows = [{"trip_id": k, "dt": d, "ts": ts, "fare": round(rng.uniform(5, 80), 2), "batch": batch}
                for k, d in zip(keys, days, strict=True)]
        self.batches[batch] = rows
        return rows

    def _writer_args(self, job: type[WriteSpec], conf: dict[str, str] | None = None, **fields: str) -> list[str]:
        """The arguments of a write (`job`: IngestSpec or BackfillSpec); `fields` are the spec's own, `conf`
        options beyond the lock's."""
        options = {**self.lock_options, **(conf or {})}
        options.update(inline_off(SERVICES))  # the services pipeline runs them
        return job(base_path=str(self.table), table_name=TABLE, table_type="MERGE_ON_READ", record_key_field="trip_id",
                   partition_path_field="dt", ordering_field="ts", hoodie_conf=options, **fields).to_argv()

    def _old_trips(self) -> None:
        """One ingest of the old trips (older than every batch: `ts` -1), racing the ingest to create the table."""
        rows = [{"trip_id": f"old-{day}-{i}", "dt": day, "ts": -1, "fare": 10.0 + i, "batch": OLD_TRIPS}
                for day in DAYS for i in range(OLD_TRIPS_PER_DAY)]
        self.batches[OLD_TRIPS] = rows
        source = self.work / "old-trips"
        write_source(source / f"{OLD_TRIPS}.parquet", rows, SCHEMA)
        self._until_done(OLD_TRIPS, OLD_TRIPS, self._writer_args(IngestSpec, source_path=str(source)))
        self._old_trips_done.set()

    def _ingest(self) -> None:
        landing = self.work / "landing"
        known: list[tuple[str, str]] = []
        early: threading.Timer | None = None  # this batch's file, landing while the job before runs
        for n in range(self.size.commits):
            if self._abort.is_set():
                return
            if early is None:
                self._land(landing, n, known)
            else:
                early.join()
            early = None
            choice = self._draw(f"ingest-{n + 1:04d}:during")
            during = n + 1 < self.size.commits and choice.random() < self.size.during
            delay = choice.uniform(0.5, 10.0)
            if during:
                early = threading.Timer(delay, self._land, (landing, n + 1, known, "files landed during a run"))
                early.start()
            self._until_done("ingest", f"ingest-{n:04d}", self._writer_args(IngestSpec, source_path=str(landing),
                                                                            run_id=f"ingest-{n:04d}"))

    def _stream(self) -> None:
        """Each batch produced to the topic (new trips and updates of earlier ones, keyed by trip), then a
        Kafka ingest of the topic, as its DAG's run on new messages would take it."""
        self.kafka.create_topic(STREAM_TOPIC, STREAM_PARTITIONS)
        client = {"bootstrap.servers": self.kafka.bootstrap_servers}
        known: list[tuple[str, str]] = []
        rng = self.rng["stream"]
        for n in range(self.size.commits):
            if self._abort.is_set():
                return
            batch = f"stream-{n:04d}"
            updates = rng.sample(known, min(len(known), self.size.rows // 2))
            new = [(f"stream-{n:04d}-{i}", rng.choice(INGEST_DAYS)) for i in range(self.size.rows - len(updates))]
            known += new
            pairs = updates + new
            rows = self._rows("stream", n, [k for k, _ in pairs], [d for _, d in pairs])
            self._produce(rows)
            self.stream_ends[batch] = watermarks(STREAM_TOPIC, client)[1]
            self._until_done("stream", batch, self._writer_args(
                IngestSpec, conf={"kafka.bootstrap.servers": self.kafka.bootstrap_servers}, source_kind="kafka",
                kafka_topic=STREAM_TOPIC, run_id=batch))

    def _produce(self, rows: list[dict[str, Any]]) -> None:
        """The rows as JSON messages, all taken by the broker (which may be restarting meanwhile)."""
        from confluent_kafka import Producer

        producer = Producer({"bootstrap.servers": self.kafka.bootstrap_servers})
        for row in rows:
            producer.produce(STREAM_TOPIC, key=row["trip_id"].encode(), value=json.dumps(row).encode())
        deadline = time.monotonic() + 120
        while producer.flush(5):
            if time.monotonic() > deadline:
                raise ChaosFailure(f"the broker took not all of batch {rows[0]['batch']} in 120 s")

    def _land(self, landing: Path, n: int, known: list[tuple[str, str]], fault: str | None = None) -> None:
        """Batch `n`'s landing file; some land with a modification time older than every file before them
        (`cp -p`, renames out of order, an S3 multipart upload), which a time watermark would skip."""
        batch, rng = f"ingest-{n:04d}", self.rng["ingest"]
        updates = rng.sample(known, min(len(known), self.size.rows // 2))
        new = [(f"live-{n:04d}-{i}", rng.choice(INGEST_DAYS)) for i in range(self.size.rows - len(updates))]
        known += new
        pairs = updates + new
        rows = self._rows("ingest", n, [k for k, _ in pairs], [d for _, d in pairs])
        path = write_source(landing / f"{batch}.parquet", rows, SCHEMA)
        late = n > 0 and self._draw(f"{batch}:late").random() < self.size.late
        with self._mutex:
            if fault:
                self.figures.faults[fault] += 1
            if late:
                self.figures.faults["files landed late"] += 1
        if late:
            oldest = min(p.stat().st_mtime for p in landing.glob("*.parquet")) - 1.0
            os.utime(path, (oldest, oldest))

    def _backfill(self, name: str) -> None:
        window = WINDOWS[name]
        while not self._old_trips_done.wait(0.5):  # they correct the old trips
            if self._abort.is_set():
                return
        for n in range(self.size.commits):
            if self._abort.is_set():
                return
            batch, day = f"{name}-{n:04d}", window[n % len(window)]
            own = [f"{name}-{day}-{n:04d}-{i}" for i in range(self.size.rows - 1)]
            shared = [f"old-{day}-{self.rng[name].randrange(OLD_TRIPS_PER_DAY)}"]  # both backfills may correct it
            rows = self._rows(name, n, own + shared, [day] * self.size.rows)
            root = self.work / "history" / batch
            write_source(root / f"dt={day}" / "part-0.parquet", [{k: v for k, v in r.items() if k != "dt"}
                                                                  for r in rows], HISTORY_SCHEMA)
            choice = self._draw(f"{batch}:twice")
            twice, delay = choice.random() < self.size.twice, choice.uniform(0.0, 6.0)
            again = None
            if twice:  # someone triggers the window again while the first run works: another run id
                args = self._writer_args(BackfillSpec, source_path=str(root), start=day, end=day,
                                         run_id=f"{batch}{AGAIN}")
                again = self._thread(self._trigger_again, name, f"{batch}{AGAIN}", args, delay)
                again.start()
            self._until_done(name, batch, self._writer_args(BackfillSpec, source_path=str(root), start=day, end=day,
                                                            run_id=batch))
            if again is not None:
                again.join()

    def _trigger_again(self, name: str, run: str, args: list[str], delay: float) -> None:
        if self._abort.wait(delay):
            return
        with self._mutex:
            self.figures.faults["windows triggered twice"] += 1
        self._until_done(name, run, args)

    # -- table services --------------------------------------------------------------------------

    def _services(self) -> None:
        options = {**self.lock_options, **SERVICE_CONF}
        rounds = 0
        while not self._abort.is_set():
            done = self._writers_done.is_set()
            if done and (self.figures.commits["services"] >= self.size.services_needed
                         or rounds > 4 * self.size.commits):
                return
            rounds += 1
            try:
                meta = MetaClient.open(self.table)
            except TableNotFoundError:
                time.sleep(1.0)
                continue
            for job in self._due_services(meta, options, rounds):
                if self._abort.is_set():
                    return
                result = self._run_service(job, f"{job.JOB}-{rounds:04d}")
                if result.get("outcome") == "completed" and job.JOB != "archive":
                    with self._mutex:
                        self.figures.commits["services"] += 1
            time.sleep(0.5 if done else 2.0)

    def _run_service(self, job: ServiceSpec, batch: str) -> dict[str, Any]:
        """One service job as Airflow runs it; a pending plan's execution sometimes meets a second executor
        of the same plan at once (a manual run, an overlapping DAG run): exactly one of them may run it."""
        rival = None
        if isinstance(job, CompactSpec | ClusterSpec) and job.mode == "execute":
            with self._mutex:
                race = self.rng["services"].random() < RACED_PLANS
                self.figures.plans_raced += race
            if race:
                rival = self._thread(self._execute, job, f"{batch}-rival")
                rival.start()
        result = self._execute(job, batch)
        if rival is not None:
            rival.join()
        return result

    def _execute(self, job: ServiceSpec, batch: str) -> dict[str, Any]:
        result = self._until_done("services", batch, job.to_argv())
        if result.get("outcome") == "withdrawn":
            with self._mutex:
                self.figures.plans_withdrawn.add(result["instant"])
        if isinstance(job, CompactSpec | ClusterSpec) and "completed" in (result.get("outcome") or ""):
            with self._mutex:
                self.figures.plan_outcomes[f"{job.JOB} {result['instant']}"][result["outcome"]] += 1
        return result

    def _due_services(self, meta: MetaClient, options: dict[str, str], rounds: int) -> Iterator[ServiceSpec]:
        """What the services DAG would run now: each service only when its Python check finds work."""
        timeline = meta.timeline()
        for service, every in ((COMPACTION, 1), (CLUSTERING, 3)):
            plans = pending_plans(timeline, service.name)
            if plans:
                yield self._service(service.spec, mode="execute", instant_time=plans[0].instant)
            elif rounds % every == 0 and service.work(meta, options, None).due:
                yield self._service(service.spec, mode="scheduleAndExecute")
        if CLEAN.work(meta, options, None).due:  # failed writes to roll back count too
            yield self._service(CleanSpec)
        if ARCHIVE.work(meta, options, None).due:  # the only archival: the writers' is off, as the services DAG sets it
            yield self._service(ArchiveSpec)

    def _service(self, job: type[ServiceSpec], **fields: str) -> ServiceSpec:
        """A table service's run, with the services pipeline's options (archival only in `archive`)."""
        off = {} if job is ArchiveSpec else ARCHIVE.inline_off
        return job(base_path=str(self.table), hoodie_conf={**self.lock_options, **SERVICE_CONF, **off}, **fields)

    # -- running jobs as Airflow would ------------------------------------------------------------

    def _until_done(self, pipeline: str, batch: str, args: list[str]) -> dict[str, Any]:
        for tries in range(1, self.size.max_tries + 1):
            if self._abort.is_set():
                raise ChaosFailure("stopped by another finding")
            log = self.logs / f"{batch}-{tries:02d}.log"
            task, env = None, {}
            if pipeline != "services":  # a writer's Airflow task process; in client mode its driver watches it
                task = subprocess.Popen(["sleep", f"{2 * JOB_TIMEOUT_S:.0f}"])
                if self._draw(f"{batch}:{tries}:client mode").random() < 0.5:
                    env = {TASK_PROCESS_ENV: task_process(task.pid)}
            job = Job.start(args, log, env=env, jars=kafka_jars() if pipeline == "stream" else ())
            entry = Running(job, pipeline, batch, time.time(), task=task)
            with self._mutex:
                self._running[job.process.pid] = entry
                self.figures.jobs += 1
            try:
                code = self._wait(entry)
            finally:
                with self._mutex:
                    self._running.pop(job.process.pid, None)
                if task is not None and not entry.orphaned:
                    task.kill()
                    task.wait()
            if code is None or (entry.killed and code == -signal.SIGKILL):
                continue  # as Airflow retries a task whose process died (an orphan's spark-submit lives on)
            result = job.result()
            if result is None:
                raise ChaosFailure(f"{pipeline} {batch} exited {code} without a result (log {log})")
            if code == 0:
                with self._mutex:
                    self.figures.tries[pipeline].append(tries)
                    if pipeline != "services":
                        self.figures.done[pipeline] += 1
                return result
            if code not in RETRYABLE:
                raise ChaosFailure(f"{pipeline} {batch} exited {code}: {result.get('message')} (log {log})")
            with self._mutex:
                self.figures.retried[result.get("error", "?")] += 1
            with self._mutex:
                jitter = self.rng["backoff"].uniform(0.5, 1.0)
            self._abort.wait(min(8.0, 0.5 * 2 ** tries) * jitter)  # backoff, jitter
        raise ChaosFailure(f"{pipeline} {batch} did not succeed in {self.size.max_tries} tries: starved")

    def _wait(self, entry: Running) -> int | None:
        """The job's exit code; None once its task process was killed (the job is left to run on)."""
        deadline = time.monotonic() + JOB_TIMEOUT_S
        while (code := entry.job.process.poll()) is None:
            with self._mutex:
                if entry.orphaned:
                    self._orphans.append(entry)
                    self.figures.faults["orphaned attempts"] += 1
                    return None
            if time.monotonic() > deadline:
                _killpg(entry.job)
                raise ChaosFailure(f"{entry.pipeline} {entry.batch} still ran after {JOB_TIMEOUT_S:g}s: hung "
                                   f"(log {entry.job.log})")
            time.sleep(0.1)
        return code

    def _await_orphans(self) -> None:
        """Every orphaned attempt ends on its own: it commits, finds its batch committed, loses its fence,
        or (in client mode) sees its task gone."""
        for entry in list(self._orphans):
            try:
                code = entry.job.process.wait(timeout=JOB_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                _killpg(entry.job)
                raise ChaosFailure(f"an orphaned attempt of {entry.pipeline} {entry.batch} still ran after "
                                   f"{JOB_TIMEOUT_S:g}s: hung (log {entry.job.log})") from None
            result = entry.job.result() or {}
            ended = result.get("outcome") or result.get("error") or f"exit {code} without a result"
            # it commits or finds its batch committed (0), is refused (3, 4, 5), or sees its task gone and ends
            # itself (1, saying so, without a Py4J traceback: that would be a job that failed otherwise)
            gone = result.get("error") == JobEndedError.__name__
            if code not in (0, *RETRYABLE) and not gone:
                raise ChaosFailure(f"an orphaned attempt of {entry.pipeline} {entry.batch} exited {code}: "
                                   f"{result.get('message', 'no result')} (log {entry.job.log})")
            if gone and "Traceback" in entry.job.log.read_text():
                raise ChaosFailure(f"an orphaned attempt of {entry.pipeline} {entry.batch} ended as its task was "
                                   f"gone, with a traceback in its log (log {entry.job.log})")
            with self._mutex:
                self.figures.faults[f"orphans ended: {ended}"] += 1

    def _kill_all(self) -> None:
        with self._mutex:
            entries = [*self._running.values(), *self._orphans]
        for entry in entries:
            entry.killed = True
            _killpg(entry.job)

    # -- chaos -----------------------------------------------------------------------------------

    def _killer(self) -> None:
        rng, due = self.rng["killer"], 0
        while self.size.kill_every is not None and not self._stop.is_set():
            due += rng.randint(*self.size.kill_every)
            while self.figures.jobs < due:
                if self._stop.wait(0.5):
                    return
            if self._stop.wait(rng.uniform(*self.size.kill_delay_s)):
                return
            with self._mutex:
                candidates = sorted((r for r in self._running.values() if not r.orphaned),
                                    key=lambda r: (r.pipeline, r.batch))
            if not candidates:
                continue
            aimed = rng.random() < self.size.at_commit
            writers = [c for c in candidates if c.pipeline != "services"]
            victim = rng.choice(writers if aimed and writers else candidates)
            if victim.task is not None and not aimed and rng.random() < self.size.orphans:
                victim.task.kill()  # the task process only: its spark-submit lives on while Airflow retries
                victim.task.wait()
                with self._mutex:
                    victim.orphaned = True
                continue
            if victim.pipeline != "services":
                self._refresh_committed()
            retry_of_committed = victim.batch in self.committed
            if aimed and victim.pipeline != "services" and not retry_of_committed \
                    and not self._await_commit_lock(victim):
                continue  # it ended, or was refused, before it came to commit
            before = self._pending_heartbeats()
            killed_at = time.time()
            victim.killed = True  # a job that exits on its own meanwhile keeps its result (its code is no SIGKILL)
            if not _killpg(victim.job):
                continue
            self._stop.wait(HEARTBEAT_EXPIRY_S / 3)
            phase = "a retry of a committed batch" if retry_of_committed else self._phase(victim, before, killed_at)
            if aimed and phase == "after data files, before the commit":
                phase = DURING_COMMIT  # its instant was inflight and it held the lock to complete it
            with self._mutex:
                self.figures.kills[phase] += 1

    def _await_commit_lock(self, victim: Running) -> bool:
        """Wait until the victim has taken the table lock to commit (Hudi logs it); False when it ended first."""
        seen, tail = 0, ""
        while not self._stop.is_set() and victim.job.process.poll() is None:
            with contextlib.suppress(OSError), victim.job.log.open("rb") as log:
                log.seek(seen)
                new = log.read()
                seen += len(new)
                tail = tail[-200:] + new.decode(errors="replace")  # a line may arrive in two reads
                if COMMIT_LOCK_TAKEN.search(tail):
                    return True
            time.sleep(0.02)
        return False

    def _pending_heartbeats(self) -> dict[str, float]:
        """Each writer's last beat, by instant (a writer deletes its file when it completes)."""
        beats = {}
        try:
            for p in (self.table / ".hoodie" / ".heartbeat").iterdir():
                with contextlib.suppress(FileNotFoundError):
                    beats[p.name] = p.stat().st_mtime
        except FileNotFoundError:
            pass
        return beats

    def _phase(self, victim: Running, before: dict[str, float], killed_at: float) -> str:
        if victim.pipeline == "services":
            return f"{victim.batch.split('-')[0]} service"
        self._refresh_committed()
        if victim.batch in self.committed:
            return "during or after the commit"
        now = self._pending_heartbeats()
        beat = float(HEARTBEAT["hoodie.client.heartbeat.interval_in_ms"]) / 1000
        since = time.strftime("%Y%m%d%H%M%S", time.localtime(victim.started))  # Hudi's instants: local time
        # beating when the kill came, still there and silent since: an instant the victim requested
        stopped = [i for i, m in before.items() if i >= since and m > killed_at - 2 * beat and i in now
                   and now[i] <= killed_at + 0.2]
        if not stopped:
            return "before its write began"
        markers = self.table / ".hoodie" / ".temp" / max(stopped)
        wrote = markers.is_dir() and any(p.is_file() for p in markers.rglob("*"))
        return "after data files, before the commit" if wrote else "before any data file"

    def _zookeeper_restarts(self) -> None:
        restarts = self.size.zookeeper_restarts
        for _ in self._progress(restarts):
            self.zookeeper.stop()
            self._stop.wait(self.rng["zookeeper"].uniform(1.0, 4.0))
            self.zookeeper.start()
            with self._mutex:
                self.figures.zookeeper_restarts += 1

    def _broker_restarts(self) -> None:
        """The broker killed (-9) at even steps of the writers' progress, started again a little later."""
        for _ in self._progress(self.size.broker_restarts):
            self.kafka.stop(hard=True)
            self._stop.wait(self.rng["broker"].uniform(1.0, 4.0))
            self.kafka.start()
            with self._mutex:
                self.figures.broker_restarts += 1

    def _progress(self, steps: int) -> Iterator[int]:
        """Yields at each of `steps` even steps of the writers' batches; stops with the chaos."""
        total = self.size.commits * len(WRITERS)
        for n in range(1, steps + 1):
            while sum(self.figures.done[p] for p in WRITERS) < total * n / (steps + 1):
                if self._stop.wait(0.5):
                    return
            yield n

    # -- checks ----------------------------------------------------------------------------------

    def _snapshots(self) -> None:
        while not self._stop.wait(self.rng["snapshots"].uniform(1.0, 3.0)):
            if (self.table / ".hoodie" / "hoodie.properties").is_file():
                self._check_snapshot()

    def _check_snapshot(self) -> None:
        began = time.time()
        try:
            rows = [dict(zip(COLUMNS, r, strict=True)) for r in read_hudi_rs(self.table, COLUMNS)]
        except Exception as e:
            if not self._properties_being_rewritten(e, began):
                raise
            with self._mutex:
                self.figures.snapshots_unreadable += 1
            return
        self._refresh_committed()  # after the read: a superset of what it could see
        self._check_rows(rows, "a hudi-rs snapshot during the run")
        uncommitted = {r["batch"] for r in rows} - self.committed
        if uncommitted:
            self._refresh_committed(archived=True)
            uncommitted -= self.committed
        if uncommitted:
            raise ChaosFailure(f"a snapshot shows rows of batches whose commit never completed: {sorted(uncommitted)}")
        with self._mutex:
            self.figures.snapshots += 1

    def _properties_being_rewritten(self, error: Exception, began: float) -> bool:
        """hudi-rs failed on a hoodie.properties that Hudi was rewriting: Hudi copies it to a backup, deletes
        it, writes it anew, then deletes the backup; Java's readers fall back to the backup meanwhile,
        hudi-rs 0.5.0 does not ("Config 'hoodie.table.name' not found"). A reader's limit, counted (and
        bounded at the end): the backup is there (the rewrite goes on), or the file was written since the
        read began (it is done)."""
        if "Config 'hoodie.table.name' not found" not in str(error):
            return False
        hoodie = self.table / ".hoodie"
        with contextlib.suppress(OSError):
            if (hoodie / "hoodie.properties").stat().st_mtime >= began - 1.0:
                return True
        return (hoodie / "hoodie.properties.backup").is_file()

    def _check_rows(self, rows: list[dict[str, Any]], where: str) -> None:
        keys = Counter(r["trip_id"] for r in rows)
        doubled = sorted(k for k, n in keys.items() if n > 1)
        with self._mutex:
            self.figures.rows_checked += len(rows)
            self.figures.doubled += len(doubled)
        if doubled:
            raise ChaosFailure(f"{where} holds keys twice: {doubled[:10]}")
        for r in rows:
            if r["batch"] not in self.batches or r not in self.batches[r["batch"]]:
                raise ChaosFailure(f"{where} holds a row no batch wrote: {r}")

    def _refresh_committed(self, *, archived: bool = False) -> None:
        try:
            meta = MetaClient.open(self.table)
        except TableNotFoundError:  # not created yet
            return
        extras = [m.extra_metadata for _, m in meta.timeline().newest_writes()]
        if archived:
            extras += [a.commit_metadata().extra_metadata for a in meta.archived_timeline()
                       if a.action in Action.WRITE_ACTIONS and a.metadata]
        found = {b for extra in extras for b in self._batches_of(extra)}
        with self._mutex:
            self.committed |= found

    def _batches_of(self, extra: dict[str, str]) -> set[str]:
        """The harness's batches a commit wrote: the stream's its checkpoint reaches, an ingest's files, or a
        backfill's run (either of a window's two)."""
        if value := extra.get(STREAMER_CHECKPOINT_KEY_V2):
            reached = KafkaOffsets.parse(value).as_dict()
            return {batch for batch, ends in list(self.stream_ends.items())
                    if all(reached.get(p, 0) >= end for p, end in ends.items())}
        return _batches_of(extra)

    def _finish(self, spark: Any) -> None:
        """After the pipelines: failed writes rolled back, plans executed, then the end state judged."""
        time.sleep(HEARTBEAT_EXPIRY_S)  # every killed write's heartbeat has expired
        self._until_done("services", "clean-final", self._service(CleanSpec).to_argv())
        meta = MetaClient.open(self.table)
        left = pending_writes(meta.timeline())
        if left:
            raise ChaosFailure(f"failed writes not rolled back after their heartbeats expired: {left}")
        self.figures.failed_writes_rolled_back = (
            sum(1 for i in meta.timeline().completed if i.action == Action.ROLLBACK)
            + sum(1 for a in meta.archived_timeline() if a.action == Action.ROLLBACK))
        for service in (COMPACTION, CLUSTERING):
            for plan in pending_plans(MetaClient.open(self.table).timeline(), service.name):
                self._execute(self._service(service.spec, mode="execute", instant_time=plan.instant),
                              f"{service.job}-final")
            left = pending_plans(MetaClient.open(self.table).timeline(), service.name)
            if left:
                raise ChaosFailure(f"{service.name} plans still pending after executing each: {left}")
        if self.figures.snapshots_unreadable > max(2, self.figures.snapshots // 20):
            raise ChaosFailure(f"hudi-rs could not read {self.figures.snapshots_unreadable} snapshots (of "
                               f"{self.figures.snapshots} read) while Hudi rewrote hoodie.properties: more than "
                               "the rewrites of a run explain")
        self._check_plans_ran_once()
        self._check_committed_files_exist()
        unreadable = self.figures.metadata_table_fallbacks["InvalidTableError"]
        if unreadable:
            raise ChaosFailure(f"the control plane could not read the metadata table {unreadable} times mid-run "
                               "and listed instead (the warnings name the cause)")
        if files_by_metadata_table(self.table) != files_by_listing(self.table):  # what the control plane reads
            raise ChaosFailure("the metadata table's files partition differs from a listing of the completed "
                               "instants' files")
        self._refresh_committed(archived=True)
        never = sorted(set(self.batches) - self.committed)
        if never:
            raise ChaosFailure(f"batches whose jobs succeeded have no commit: {never}")
        made = self.figures.commits
        for pipeline in WRITERS:
            made[pipeline] = sum(1 for b in self.committed if b.startswith(pipeline + "-"))
        short = {p: made[p] for p in WRITERS if made[p] < self.size.commits}
        if made["services"] < self.size.services_needed:
            short["services"] = made["services"]
        if short:
            raise ChaosFailure(f"pipelines made fewer commits than the run asks ({self.size.commits} per writer, "
                               f"{self.size.services_needed} of the services): {short}")
        for rows in self.batches.values():
            self.model.upsert(rows)
        expected = self.model.expected(COLUMNS)
        got = read_hudi_rs(self.table, COLUMNS)
        self._check_rows([dict(zip(COLUMNS, r, strict=True)) for r in got], "the final hudi-rs read")
        spark_rows = read_spark(spark, self.table, COLUMNS)
        self.figures.lost = len(set(expected) - set(got))
        if got != expected or spark_rows != expected:
            raise ChaosFailure(f"the final table differs from the model: hudi-rs has {len(got)} rows, Spark "
                               f"{len(spark_rows)}, the model {len(expected)}; missing "
                               f"{sorted(set(expected) - set(got))[:5]}, extra {sorted(set(got) - set(expected))[:5]}")
        self._check_no_lock_node_left()

    def _check_plans_ran_once(self) -> None:
        """Of the jobs that ran a plan, at most one executed it (the others found it done by another run);
        and a plan executed twice would leave two base files of one file group at the plan's instant."""
        twice_run = {plan: dict(outcomes) for plan, outcomes in self.figures.plan_outcomes.items()
                     if outcomes["completed"] > 1}
        if twice_run:
            raise ChaosFailure(f"plans that more than one job executed: {twice_run}")
        meta = MetaClient.open(self.table)
        timeline = meta.timeline()
        for inst in timeline.completed:
            if inst.action in (Action.COMMIT, Action.REPLACE_COMMIT):
                self.figures.plans_executed["compaction" if inst.action == Action.COMMIT else "clustering"] += 1
        bases: Counter[tuple[str, str, str]] = Counter()
        for path in self.table.rglob("*.parquet"):
            if ".hoodie" in path.relative_to(self.table).parts:
                continue
            name = BaseFileName.parse(path.name)
            bases[(str(path.parent.relative_to(self.table)), name.file_id, name.instant_time)] += 1
        twice = [k for k, n in bases.items() if n > 1]
        if twice:
            raise ChaosFailure(f"file groups with two base files of one instant (a plan or write run twice): {twice}")

    def _check_committed_files_exist(self) -> None:
        meta = MetaClient.open(self.table)
        timeline = meta.timeline()
        # the archiver moves cleans to the archived timeline while the commits they cleaned may stay active;
        # a clean killed after its deletes leaves them to the run that completes its plan, which finds the
        # files gone and lists them as failed deletes: every file a completed clean planned counts
        cleans = [timeline.read_bytes(inst) for inst in timeline.completed if inst.action == Action.CLEAN]
        cleans += [a.metadata for a in meta.archived_timeline() if a.action == Action.CLEAN]
        cleaned: set[str] = set()
        for data in cleans:
            if data:
                for p in CleanMetadata.from_avro_bytes(data).partition_metadata.values():
                    planned = (*p.success_delete_files, *p.failed_delete_files, *p.delete_path_patterns)
                    cleaned |= {posixpath.join(p.partition_path, posixpath.basename(f)) for f in planned}
        missing = []
        for inst in timeline.completed:
            if inst.action not in Action.WRITE_ACTIONS:
                continue
            for stat in timeline.commit_metadata(inst).write_stats():
                if stat.path and stat.path not in cleaned and not (self.table / stat.path).is_file():
                    missing.append(f"{inst.requested_time}: {stat.path}")
        if missing:
            raise ChaosFailure(f"files of completed instants are missing: {missing[:10]}")

    def _check_no_lock_node_left(self) -> None:
        """Killed jobs' lock nodes go with their ZooKeeper sessions; none may outlive them."""
        from kazoo.client import KazooClient

        base = self.lock_options["hoodie.write.lock.zookeeper.base_path"]
        key = self.lock_options["hoodie.write.lock.zookeeper.lock_key"]
        session_s = int(self.lock_options["hoodie.write.lock.zookeeper.session_timeout_ms"]) / 1000
        client = KazooClient(hosts=self.zookeeper.url)
        client.start(timeout=15)
        try:
            deadline = time.monotonic() + 2 * session_s + 5
            while True:
                locks = [n for n in client.get_children(base) if n == key or n.startswith(key + ".")]
                held = {n: client.get_children(f"{base}/{n}") for n in locks}
                held = {n: c for n, c in held.items() if c}
                if not held:
                    return
                if time.monotonic() > deadline:
                    raise ChaosFailure(f"lock nodes left behind in ZooKeeper: {held}")
                time.sleep(1.0)
        finally:
            client.stop()
            client.close()


class _Fallbacks(logging.Handler):
    """Counts MetaClient's warnings that it listed a table around its metadata table, by the cause's class."""

    def __init__(self, counts: Counter[str]) -> None:
        super().__init__(logging.WARNING)
        self.counts = counts

    def emit(self, record: logging.LogRecord) -> None:
        cause = record.args[-1] if isinstance(record.args, tuple) and record.args else None
        self.counts[type(cause).__name__] += 1


def _killpg(job: Job) -> bool:
    try:
        os.killpg(job.process.pid, signal.SIGKILL)
        return True
    except ProcessLookupError:
        return False


def _batches_of(extra: dict[str, str]) -> set[str]:
    """The harness's batches a commit wrote: an ingest's files, or a backfill's run (either of a window's two)."""
    if value := extra.get(INGEST_CHECKPOINT_KEY):
        return {posixpath.basename(path).removesuffix(".parquet") for path in json.loads(value)["files"]}
    if value := extra.get(BACKFILL_CHECKPOINT_KEY):
        return {json.loads(value)["run"].removesuffix(AGAIN)}
    return set()

