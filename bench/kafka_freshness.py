"""A Kafka-fed table: freshness and catch-up of hudi-ops' ingest (a spark-submit per run, no JVM held
between runs) against what a user would otherwise run, a Spark Structured Streaming job from the same
topic into Hudi's streaming sink (bench/streaming_hudi_sink.py), measured in one run on these cores.

Freshness: every `--tick-s` a burst of `--batch-rows` messages goes to the run's topic, at a seeded
moment within the tick; a burst's latency is from the producer's flush to the first hudi-rs snapshot
that shows all of it (a burst is not atomic: a run that starts while it is produced takes part of it).
Each run on a new COPY_ON_WRITE table under
the ZooKeeper lock, with its own topic of 3 partitions:

(a) `scheduled`: hudi-ops' ingest on a `--tick-s` schedule (a run at each tick; a tick while a run is at
    work waits for it, as Airflow's next run does with max_active_runs 1; a tick with no new message
    starts no JVM, as the operator's idle check skips it);
(b) `on_messages`: hudi-ops' ingest as soon as messages came (`on_new_messages`: the AssetWatcher's run,
    without Airflow's own scheduling delay), one run at a time;
(c) `beside`: (a) while a backfill of `--backfill-factor` times the stream's volume in `--days` older
    days runs as its own pipeline from the third tick;
(d) `streaming`: the Structured Streaming job, a micro-batch every `--tick-s` (its trigger), running
    throughout; its memory (the resident size of its JVM and Python driver) and CPU share are sampled
    over its last idle tick.

Catch-up (first): a backlog of `--backlog` messages on a new topic, then (e) one hudi-ops ingest of all
of it and (f) the streaming job with `availableNow` (all of it, then it ends), each into a new table
with `--driver-memory`, each committing at most `--catch-up-step` messages at a time (hudi-ops'
`hoodie.streamer.kafka.source.maxEvents`, the Kafka reader's `maxOffsetsPerTrigger`): events per
second per core (2 cores: `local[2]`).

One JSON line: each freshness run's p50/p95/max, the streaming job's idle memory and CPU, the catch-up
rates, and the ratios scheduled/streaming p95 (goal <= 1.2), on_messages/streaming p95 and hudi-ops'
catch-up rate / the streaming job's (goal >= 1); the runs' latencies per burst go to an SVG (`--plot`,
default docs/kafka_freshness.svg).
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import json
import os
import random
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

import common  # bench/, the script's folder
import pyarrow as pa
import pyarrow.parquet as pq

from hudi_ops.job_specs import BackfillSpec, IngestSpec
from hudi_ops.sources.kafka import MAX_EVENTS, kafka_work
from hudi_ops.spark.driver_jvm import LARGE_EVENTS, driver_conf
from hudi_ops.spark.hudi_bundle import hudi_jars
from hudi_ops.spark.kafka_connector import kafka_jars
from hudi_ops.spark.launch import HUDI_SESSION_CONF, spark_submit_command
from local_platform.kafka_server import KafkaServer
from local_platform.zookeeper_server import ZookeeperServer

TODAY = "2026-11-26"
POLL_S = 0.25
BACKFILL_AT = 3  # the backfill starts with the third tick
MAX_TRIES = 10
RUNS = ("scheduled", "on_messages", "beside", "streaming")
STREAMING_JOB = str(Path(__file__).parent / "streaming_hudi_sink.py")
PARTITIONS = 3
CORES = 2  # local[2]


def _trips(prefix: str, n: int, rows: int, day: str = TODAY) -> list[dict[str, object]]:
    return [{"trip_id": f"{prefix}-{n:05d}-{i:06d}", "dt": day, "ts": 3, "fare": float(i % 80),
             "batch": f"{prefix}-{n:05d}"} for i in range(rows)]


def produce(bootstrap: str, topic: str, rows: list[dict[str, object]]) -> None:
    from confluent_kafka import Producer

    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 20, "queue.buffering.max.messages": 1_000_000})
    for row in rows:
        while True:
            try:
                producer.produce(topic, key=str(row["trip_id"]).encode(), value=json.dumps(row).encode())
                break
            except BufferError:  # the local queue is full: let it drain
                producer.poll(0.1)
    if producer.flush(120):
        raise AssertionError(f"the broker took not all messages of topic {topic}")


def submit(args: list[str], what: str, conf: dict[str, str] | None = None) -> float:
    """A hudi-ops job as its Airflow task runs it (a refusal by Hudi, exit 3 or 4, tried again); its seconds."""
    started = time.perf_counter()
    for _ in range(MAX_TRIES):
        done = subprocess.run(spark_submit_command(args, conf={**common.CONF, **(conf or {})},
                                                   spark_submit=common.SPARK_SUBMIT, jars=kafka_jars()),
                              capture_output=True, text=True, check=False)
        if done.returncode == 0:
            return time.perf_counter() - started
        if done.returncode not in (3, 4):
            break
    raise AssertionError(f"{what} exited {done.returncode}:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")


def streaming_command(bootstrap: str, topic: str, table: Path, trigger: str, options: dict[str, str],
                      conf: dict[str, str] | None = None) -> list[str]:
    command = [common.SPARK_SUBMIT, "--master", f"local[{CORES}]", "--jars", ",".join([*hudi_jars(), *kafka_jars()])]
    for key, value in {**HUDI_SESSION_CONF, **common.CONF, **(conf or {})}.items():
        command += ["--conf", f"{key}={value}"]
    return [*command, STREAMING_JOB, bootstrap, topic, str(table), str(table.parent / "checkpoint"), trigger,
            *(f"{k}={v}" for k, v in options.items())]


def tree_usage(root: int) -> tuple[float, float]:
    """(resident MiB, CPU seconds) of a process and its descendants."""
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            children.setdefault(int(stat.read_text().rsplit(")", 1)[1].split()[1]), []).append(int(stat.parent.name))
        except (OSError, ValueError):
            continue
    rss_kb, ticks, todo = 0, 0, [root]
    while todo:
        pid = todo.pop()
        todo += children.get(pid, [])
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            status = Path(f"/proc/{pid}/status").read_text()
        except OSError:
            continue
        ticks += int(fields[11]) + int(fields[12])
        rss_kb += next((int(line.split()[1]) for line in status.splitlines() if line.startswith("VmRSS:")), 0)
    return rss_kb / 1024, ticks / os.sysconf("SC_CLK_TCK")


class FreshnessRun:
    """One run: the bursts, its writer (hudi-ops' pipeline or the streaming job) and the poller."""

    def __init__(self, name: str, root: Path, kafka: KafkaServer, lock: dict[str, str], ticks: int,
                 tick_s: float, batch_rows: int) -> None:
        self.name, self.kafka, self.lock = name, kafka, lock
        self.ticks, self.tick_s, self.batch_rows = ticks, tick_s, batch_rows
        self.table, self.topic = root / name / "table", f"fresh-{name}"
        self.produced: dict[str, float] = {}
        self.visible: dict[str, float] = {}
        self.jobs = self.skipped = 0
        self.backfill_s: float | None = None
        self.idle: dict[str, float] = {}
        self._mutex = threading.Lock()
        self._news = threading.Event()
        self._done = threading.Event()
        self._failure: BaseException | None = None
        self._started = 0.0

    def _guard(self, target: Callable[[], None]) -> threading.Thread:
        return common.guarded(target, self._failed)

    def _failed(self, error: BaseException) -> None:
        self._failure = self._failure or error
        self._done.set()
        self._news.set()

    def _bursts(self) -> None:
        moments = random.Random(self.name)  # the same moments within each tick whatever the timing
        for n in range(self.ticks):
            at = self._started + n * self.tick_s + moments.uniform(0.05, 0.9) * self.tick_s
            if self._done.wait(max(0.0, at - time.monotonic())):
                return
            produce(self.kafka.bootstrap_servers, self.topic, _trips("burst", n, self.batch_rows))
            with self._mutex:
                self.produced[f"burst-{n:05d}"] = time.monotonic()
            self._news.set()

    def _ingest(self) -> None:
        args = IngestSpec(base_path=str(self.table), table_name="trips", record_key_field="trip_id",
                          partition_path_field="dt", ordering_field="ts", source_kind="kafka", kafka_topic=self.topic,
                          hoodie_conf={**self.lock, "kafka.bootstrap.servers": self.kafka.bootstrap_servers}).to_argv()
        submit(args, f"{self.name}: the ingest")
        self.jobs += 1

    def _has_news(self) -> bool:
        """The operator's idle check: the topic's end offsets against the table's checkpoint, no JVM."""
        return kafka_work(str(self.table), self.topic, {"bootstrap.servers": self.kafka.bootstrap_servers}).events > 0

    def _scheduled(self) -> None:
        """A run at each tick; a tick passed while a run worked starts the next at once (one run at a time)."""
        tick = 1
        while not self._done.is_set() and len(self.visible) < self.ticks:
            due = self._started + tick * self.tick_s
            if self._done.wait(max(0.0, due - time.monotonic())):
                return
            tick = max(tick + 1, int((time.monotonic() - self._started) // self.tick_s) + 1)
            if self._has_news():
                self._ingest()
            else:
                self.skipped += 1

    def _on_messages(self) -> None:
        while not self._done.is_set() and len(self.visible) < self.ticks:
            self._news.wait(0.5)
            self._news.clear()
            if self._has_news():
                self._ingest()

    def _backfill(self, source: Path, days: list[str]) -> None:
        while len(self.produced) < BACKFILL_AT and not self._done.is_set():
            time.sleep(0.05)
        started = time.perf_counter()
        args = BackfillSpec(base_path=str(self.table), table_name="trips", record_key_field="trip_id",
                            partition_path_field="dt", ordering_field="ts", source_path=str(source), start=days[0],
                            end=days[-1], run_id=f"{self.name}-backfill", hoodie_conf=self.lock).to_argv()
        submit(args, f"{self.name}: the backfill")
        self.backfill_s = time.perf_counter() - started

    def _streaming(self) -> None:
        log = self.table.parent / "streaming.log"
        log.parent.mkdir(parents=True, exist_ok=True)
        with log.open("w") as out:  # a file: a pipe nobody reads would stall the job once full
            process = subprocess.Popen(streaming_command(self.kafka.bootstrap_servers, self.topic, self.table,
                                                         f"{self.tick_s:g}", self.lock),
                                       stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            while len(self.visible) < self.ticks and not self._done.is_set():
                if process.poll() is not None:
                    raise AssertionError(f"the streaming job exited {process.returncode}:\n{log.read_text()[-3000:]}")
                time.sleep(0.5)
            # its last idle tick: no message comes, it keeps its JVM and polls the topic
            rss_before, cpu_before = tree_usage(process.pid)
            self._done.wait(self.tick_s)
            rss, cpu = tree_usage(process.pid)
            self.idle = {"idle_rss_mib": round(max(rss, rss_before)), "idle_cpu_share": round(
                (cpu - cpu_before) / self.tick_s / CORES, 3)}
        finally:
            with contextlib.suppress(ProcessLookupError):  # it failed on its own: its log says why
                os.killpg(process.pid, signal.SIGKILL)
            process.wait()

    def _poll(self) -> None:
        while len(self.visible) < self.ticks and not self._done.is_set():
            time.sleep(POLL_S)
            counts = common.rows_by_batch(self.table, TODAY)
            seen = time.monotonic()
            for b, count in (counts or {}).items():
                if count == self.batch_rows:  # a run may start while a burst is being produced: part of it
                    self.visible.setdefault(b, seen)  # is then visible first, the rest with the next commit

    def run(self, backfill: tuple[Path, list[str]] | None = None) -> dict[str, object]:
        self.kafka.create_topic(self.topic, PARTITIONS)
        writer = {"scheduled": self._scheduled, "beside": self._scheduled, "on_messages": self._on_messages,
                  "streaming": self._streaming}[self.name]
        threads = [self._guard(self._bursts), self._guard(self._poll), self._guard(writer)]
        if backfill is not None:
            threads.append(self._guard(lambda: self._backfill(*backfill)))
        self._started = time.monotonic()
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        if self._failure is not None:
            raise self._failure
        latencies = [self.visible[b] - at for b, at in self.produced.items()]
        return {"run": self.name, "p50_s": round(common.percentile(latencies, 0.5), 2),
                "p95_s": round(common.percentile(latencies, 0.95), 2), "max_s": round(max(latencies), 2),
                "jobs": self.jobs, "idle_ticks_skipped": self.skipped,
                "backfill_s": None if self.backfill_s is None else round(self.backfill_s, 1), **self.idle,
                "latencies_s": [round(x, 2) for x in latencies]}


def backfill_source(root: Path, rows: int, days: int) -> tuple[Path, list[str]]:
    """`rows` rows of history in `days` day folders before today's (the folder names the day)."""
    first = dt.date.fromisoformat(TODAY) - dt.timedelta(days=days + 30)
    names = [(first + dt.timedelta(days=n)).isoformat() for n in range(days)]
    per_day = rows // days
    for day in names:
        (root / f"dt={day}").mkdir(parents=True)
        pq.write_table(pa.table({"trip_id": [f"old-{day}-{i:07d}" for i in range(per_day)], "ts": [1] * per_day,
                                 "fare": [float(i % 500) for i in range(per_day)],
                                 "batch": [f"backfill-{day}"] * per_day}), root / f"dt={day}" / "part-0.parquet")
    return root, names


def catch_up(root: Path, kafka: KafkaServer, zookeeper: ZookeeperServer, backlog: int, step: int,
             driver_memory: str) -> dict[str, object]:
    """The backlog produced once; each reader into a new table of its own, with the same driver memory and
    the same most messages per commit (`step`, 0: all in one)."""
    memory = {"spark.driver.memory": driver_memory}
    topic = "backlog"
    kafka.create_topic(topic, PARTITIONS)
    chunk = 100_000
    for n in range(0, backlog, chunk):
        produce(kafka.bootstrap_servers, topic, _trips("backlog", n // chunk, min(chunk, backlog - n)))
    hudi_ops_table, streaming_table = (root / "catch-up" / reader / "table" for reader in ("hudi_ops", "streaming"))
    args = IngestSpec(base_path=str(hudi_ops_table), table_name="trips", record_key_field="trip_id",
                      partition_path_field="dt", ordering_field="ts", source_kind="kafka", kafka_topic=topic,
                      hoodie_conf={**common.lock_options(zookeeper, "catch-up-hudi-ops"),
                                   "kafka.bootstrap.servers": kafka.bootstrap_servers,
                                   MAX_EVENTS: str(step)}).to_argv()
    # the driver's JVM as the ingest's task chooses it for that many messages (hudi_ops.spark.driver_jvm)
    hudi_ops_s = submit(args, "the catch-up ingest", {**memory, **driver_conf(large=backlog >= LARGE_EVENTS)})
    started = time.perf_counter()
    bound = {"maxOffsetsPerTrigger": str(step)} if step else {}
    done = subprocess.run(streaming_command(kafka.bootstrap_servers, topic, streaming_table, "available-now",
                                            {**common.lock_options(zookeeper, "catch-up-streaming"), **bound},
                                            memory),
                          capture_output=True, text=True, check=False)
    streaming_s = time.perf_counter() - started
    if done.returncode:
        raise AssertionError(f"the streaming catch-up exited {done.returncode}:\n{done.stderr[-3000:]}")
    import hudi

    for table in (hudi_ops_table, streaming_table):  # all of it, each key once
        read = pa.Table.from_batches(hudi.HudiTable(str(table)).read())
        if read.num_rows != backlog or len(set(read.column("trip_id").to_pylist())) != backlog:
            raise AssertionError(f"{table} holds {read.num_rows} rows of the backlog's {backlog}")
    rate = {"hudi_ops": backlog / hudi_ops_s / CORES, "streaming": backlog / streaming_s / CORES}
    return {"backlog": backlog, "step": step, "hudi_ops_s": round(hudi_ops_s, 1), "streaming_s": round(streaming_s, 1),
            "hudi_ops_events_per_s_per_core": round(rate["hudi_ops"]),
            "streaming_events_per_s_per_core": round(rate["streaming"]),
            "hudi_ops_over_streaming_rate": round(rate["hudi_ops"] / rate["streaming"], 2)}


def plot(results: dict[str, dict[str, object]], tick_s: float, path: Path) -> None:
    colours = {"scheduled": "#4c78a8", "on_messages": "#59a14f", "beside": "#f28e2b", "streaming": "#e15759"}
    labels = {"scheduled": f"hudi-ops, a run every {tick_s:g} s", "on_messages": "hudi-ops, a run on new messages",
              "beside": "hudi-ops every tick, beside a backfill",
              "streaming": f"Structured Streaming, {tick_s:g} s trigger"}
    fig, ax = common.line_chart()
    for name, r in results.items():
        minutes = [i * tick_s / 60 for i in range(len(r["latencies_s"]))]
        ax.plot(minutes, r["latencies_s"], color=colours[name], marker=".", linewidth=1.2,
                label=f"{labels[name]}: p95 {r['p95_s']} s")
    ax.set_xlabel(f"when the burst was produced (minutes into the run; one every {tick_s:g} s)")
    ax.set_ylabel("produced to visible in the table (s)")
    ax.set_ylim(bottom=0)
    ax.set_title("Kafka-fed table freshness: hudi-ops' ingest runs against a streaming job")
    ax.legend(loc="upper right", fontsize="small")
    common.save_chart(fig, path)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--ticks", type=int, default=10)
    ap.add_argument("--tick-s", type=float, default=60.0, help="the schedule, and the streaming job's trigger")
    ap.add_argument("--batch-rows", type=int, default=1_000, help="messages per burst")
    ap.add_argument("--backfill-factor", type=int, default=20, help="the backfill's rows / the stream's")
    ap.add_argument("--days", type=int, default=20, help="the days of history the backfill writes")
    ap.add_argument("--backlog", type=int, default=10_000_000, help="messages of the catch-up (0: none)")
    ap.add_argument("--catch-up-step", type=int, default=1_000_000,
                    help="the most messages each catch-up reader commits at a time (0: the whole backlog at once)")
    ap.add_argument("--driver-memory", default="4g", help="both catch-up jobs' (the freshness runs: Spark's default)")
    ap.add_argument("--runs", nargs="*", choices=RUNS, default=list(RUNS),
                    help="the freshness runs (none: the catch-up alone)")
    ap.add_argument("--plot", type=Path, default=Path(__file__).parent.parent / "docs" / "kafka_freshness.svg")
    args = ap.parse_args()
    root = Path(tempfile.mkdtemp(prefix="hudi-ops-bench-"))
    zookeeper, kafka = ZookeeperServer(root / "zk"), KafkaServer(root / "kafka")
    try:
        zookeeper.start()
        kafka.start()
        # the catch-up first: the longest single job, and the one that could run out of memory
        caught_up = catch_up(root, kafka, zookeeper, args.backlog, args.catch_up_step,
                             args.driver_memory) if args.backlog else None
        results = {}
        for name in args.runs:
            backfill = backfill_source(root / "history", args.ticks * args.batch_rows * args.backfill_factor,
                                       args.days) if name == "beside" else None
            run = FreshnessRun(name, root, kafka, common.lock_options(zookeeper, name), args.ticks, args.tick_s,
                               args.batch_rows)
            results[name] = run.run(backfill)
        # the catch-up alone is a benchmark line of its own, beside the freshness runs' (bench/run.py keeps both)
        line: dict[str, object] = {"bench": "kafka_freshness" if results else "kafka_catch_up",
                                   "ticks": args.ticks, "tick_s": args.tick_s, "batch_rows": args.batch_rows,
                                   "backfill_factor": args.backfill_factor, "runs": list(results.values())}
        p95 = {name: float(r["p95_s"]) for name, r in results.items()}
        if "streaming" in p95:
            for name in ("scheduled", "on_messages", "beside"):
                if name in p95:
                    line[f"{name}_over_streaming_p95"] = round(p95[name] / p95["streaming"], 2)
        if caught_up is not None:
            line["catch_up"] = caught_up
        if set(results) == set(RUNS):
            plot(results, args.tick_s, args.plot)
        print(json.dumps(line))
    finally:
        kafka.stop()
        zookeeper.stop()
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
