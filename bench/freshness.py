"""Freshness under backfill: how long a steady ingest's rows take to become readable while a backfill
runs, with and without RFC-22's concurrent writers.

A steady ingest pipeline: every `--tick-s` a file of `--batch-rows` rows lands in its landing folder
(today's partition), and an ingest job (a hudi-ops `ingest` spark-submit, as its Airflow task runs it:
one run at a time, the next as soon as a file landed since the last began) commits what landed. A
poller reads the ingest partition with hudi-rs every 0.25 s; a batch's latency is from its file's
landing to the first snapshot that shows its rows (all of them at once: a snapshot showing part of a
batch is a finding). Three runs on the same data, each on a new COPY_ON_WRITE table (the first ingest
creates it) with Hudi's defaults otherwise (the metadata table, inline clean and archival):

(a) `alone`: the ingest pipeline alone, under the ZooKeeper lock (hudi-ops' settings);
(b) `beside`: the same, while a backfill of `--backfill-factor` times the ingest's whole volume (in
    `--days` older days) runs as its own pipeline (its own spark-submit, one commit a day) under the
    same lock (RFC-22);
(c) `in_turn`: the single writer RFC-22 replaces: one process's queue runs the backfill and the ingest
    jobs in turn, first come first served, without a lock (Hudi's single-writer mode).

The backfill starts with the third tick. One JSON line: each run's latency p50, p95 and max, the
backfill's duration, and the ratios (c)/(b) p95 (goal >= 5) and (b)/(a) p95 (goal <= 1.5); the three
runs' latencies per tick go to an SVG (`--plot`, default docs/freshness.svg).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import shutil
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
from hudi_ops.spark.launch import spark_submit_command
from local_platform.zookeeper_server import ZookeeperServer

TODAY = "2026-11-26"
SCHEMA = pa.schema([("trip_id", pa.string()), ("dt", pa.string()), ("ts", pa.int64()), ("fare", pa.float64()),
                    ("batch", pa.string())])
POLL_S = 0.25
BACKFILL_AT = 3  # landed files: the backfill starts with the third tick
MAX_TRIES = 10
RUNS = ("alone", "beside", "in_turn")


class Workload:
    """The data every run writes: the backfill's source (`factor` times the ingest's whole volume, in
    `days` day folders before today's) and the ingest's batches."""

    def __init__(self, root: Path, ticks: int, batch_rows: int, factor: int, days: int) -> None:
        self.ticks, self.batch_rows = ticks, batch_rows
        first = dt.date.fromisoformat(TODAY) - dt.timedelta(days=days + 30)
        self.days = [(first + dt.timedelta(days=n)).isoformat() for n in range(days)]
        per_day = ticks * batch_rows * factor // days
        self.backfill_rows = per_day * days
        self.backfill = root / "backfill"
        for day in self.days:  # the folder names the day: the files carry no dt column
            columns = {"trip_id": [f"old-{day}-{i:07d}" for i in range(per_day)], "ts": [1] * per_day,
                       "fare": [float(i % 500) for i in range(per_day)], "batch": [f"backfill-{day}"] * per_day}
            (self.backfill / f"dt={day}").mkdir(parents=True)
            pq.write_table(pa.table(columns), self.backfill / f"dt={day}" / "part-0.parquet")

    def batch(self, n: int) -> pa.Table:
        keys = [f"live-{n:04d}-{i:05d}" for i in range(self.batch_rows)]
        return pa.table({"trip_id": keys, "dt": [TODAY] * len(keys), "ts": [3] * len(keys),
                         "fare": [float(i % 80) for i in range(len(keys))],
                         "batch": [f"ingest-{n:04d}"] * len(keys)}, schema=SCHEMA)


class Run:
    """One run on a new table: the ticks, the ingest pipeline (the backfill with it or beside it) and the
    poller."""

    def __init__(self, name: str, root: Path, work: Workload, tick_s: float, lock: dict[str, str]) -> None:
        self.name, self.work, self.tick_s, self.lock = name, work, tick_s, lock
        self.table, self.landing = root / name / "table", root / name / "landing"
        self.landed: dict[str, float] = {}
        self.visible: dict[str, float] = {}
        self.backfill_s: float | None = None
        self.retries = 0
        self._mutex = threading.Lock()
        self._landed_event = threading.Event()
        self._done = threading.Event()
        self._failure: BaseException | None = None

    def _submit(self, spec_args: list[str]) -> None:
        """One job as its Airflow task runs it: a refusal by Hudi (exit 3, 4) is tried again."""
        for _ in range(MAX_TRIES):
            done = subprocess.run(spark_submit_command(spec_args, conf=common.CONF, spark_submit=common.SPARK_SUBMIT),
                                  capture_output=True, text=True, check=False)
            if done.returncode == 0:
                return
            if done.returncode not in (3, 4):
                break
            self.retries += 1
        raise AssertionError(f"{self.name}: {spec_args[0]} exited {done.returncode}:\n{done.stdout[-3000:]}"
                             f"\n{done.stderr[-3000:]}")

    def _spec(self, job: type[IngestSpec] | type[BackfillSpec], **fields: str) -> list[str]:
        return job(base_path=str(self.table), table_name="trips", record_key_field="trip_id",
                   partition_path_field="dt", ordering_field="ts", hoodie_conf=self.lock, **fields).to_argv()

    def _ingest(self) -> None:
        self._submit(self._spec(IngestSpec, source_path=str(self.landing)))

    def _backfill(self) -> None:
        started = time.perf_counter()
        self._submit(self._spec(BackfillSpec, source_path=str(self.work.backfill), start=self.work.days[0],
                                end=self.work.days[-1], run_id=f"{self.name}-backfill"))
        self.backfill_s = time.perf_counter() - started

    def _guard(self, target: Callable[[], None]) -> threading.Thread:
        return common.guarded(target, self._failed)

    def _failed(self, error: BaseException) -> None:
        self._failure = self._failure or error
        self._done.set()
        self._landed_event.set()

    def _land(self) -> None:
        started = time.monotonic()
        self.landing.mkdir(parents=True)
        for n in range(self.work.ticks):
            if self._done.wait(max(0.0, started + n * self.tick_s - time.monotonic())):
                return  # another thread failed
            hidden = self.landing / f".{n:04d}.parquet"  # hidden files are not source files: landed on rename
            pq.write_table(self.work.batch(n), hidden)
            os.replace(hidden, self.landing / f"{n:04d}.parquet")
            with self._mutex:
                self.landed[f"ingest-{n:04d}"] = time.monotonic()
            self._landed_event.set()

    def _pending(self, covered: int) -> bool:
        with self._mutex:
            return len(self.landed) > covered

    def _ingest_pipeline(self, backfill_at: int | None) -> None:
        """One ingest run at a time, the next as soon as a file landed since the last began; with
        `backfill_at`, the single writer: the backfill takes its turn once that many files landed."""
        covered, backfilled = 0, backfill_at is None
        while not self._done.is_set() and (covered < self.work.ticks or not backfilled):
            self._landed_event.wait(0.5)
            self._landed_event.clear()
            with self._mutex:
                landed = len(self.landed)
            if not backfilled and landed >= backfill_at:
                self._backfill()
                backfilled = True
            elif landed > covered:
                covered = landed
                self._ingest()

    def _poll(self) -> None:
        while len(self.visible) < self.work.ticks and not self._done.is_set():
            time.sleep(POLL_S)
            counts = common.rows_by_batch(self.table, TODAY)
            seen = time.monotonic()
            for b, count in (counts or {}).items():
                if count != self.work.batch_rows:
                    raise AssertionError(f"{self.name}: a snapshot shows {count} of {b}'s {self.work.batch_rows} rows")
                self.visible.setdefault(b, seen)

    def run(self, backfill: str | None) -> dict[str, object]:
        """`backfill`: None, "beside" (its own pipeline) or "in_turn" (the ingest pipeline's queue)."""
        threads = [self._guard(self._land), self._guard(self._poll)]
        if backfill == "beside":
            def beside() -> None:
                while len(self.landed) < BACKFILL_AT and not self._done.is_set():
                    time.sleep(0.05)
                self._backfill()
            threads += [self._guard(lambda: self._ingest_pipeline(None)), self._guard(beside)]
        else:
            threads.append(self._guard(lambda: self._ingest_pipeline(BACKFILL_AT if backfill == "in_turn" else None)))
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        if self._failure is not None:
            raise self._failure
        latencies = [self.visible[b] - at for b, at in self.landed.items()]
        return {"run": self.name, "p50_s": round(common.percentile(latencies, 0.5), 2),
                "p95_s": round(common.percentile(latencies, 0.95), 2), "max_s": round(max(latencies), 2),
                "backfill_s": None if self.backfill_s is None else round(self.backfill_s, 1),
                "retries": self.retries,
                "latencies_s": [round(x, 2) for x in latencies]}


def plot(results: dict[str, dict[str, object]], tick_s: float, path: Path) -> None:
    """Each run's landing-to-visible latency per landed file, over the run, with the goal drawn in."""
    import matplotlib.ticker

    colours = {"alone": "#4c78a8", "beside": "#59a14f", "in_turn": "#e15759"}
    labels = {"alone": "ingest alone", "beside": "beside the backfill (hudi-ops)",
              "in_turn": "in turn with the backfill (single writer)"}
    fig, ax = common.line_chart()
    for name, r in results.items():
        minutes = [i * tick_s / 60 for i in range(len(r["latencies_s"]))]
        ax.plot(minutes, r["latencies_s"], color=colours[name], marker=".", linewidth=1.2,
                label=f"{labels[name]}: p95 {r['p95_s']} s")
    if "alone" in results:
        goal = 1.5 * float(results["alone"]["p95_s"])
        ax.axhline(goal, color="black", linestyle="--", linewidth=1,
                   label=f"goal beside the backfill: p95 <= 1.5 x alone's ({goal:.1f} s)")
    ax.set_xlabel(f"when the file landed (minutes into the run; one every {tick_s:g} s)")
    ax.set_ylabel("landing to visible in the table (s)")
    ax.set_yscale("log")
    top = max(max(r["latencies_s"]) for r in results.values())
    ax.set_yticks([t for t in (5, 10, 15, 20, 30, 50, 100, 200, 500, 1000) if t <= top * 1.5])
    ax.yaxis.set_major_formatter(matplotlib.ticker.ScalarFormatter())
    ax.yaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
    ax.set_title("Ingest freshness: a file every tick, a backfill from the third tick")
    ax.legend(loc="upper right", fontsize="small")
    common.save_chart(fig, path)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--ticks", type=int, default=30,
                    help="at least 3: the backfill starts with the third; with 12 to 30 the p95 is the "
                         "second-largest latency, with more the third")
    ap.add_argument("--tick-s", type=float, default=30.0)
    ap.add_argument("--batch-rows", type=int, default=5_000)
    ap.add_argument("--backfill-factor", type=int, default=20, help="the backfill's rows / the ingest's")
    ap.add_argument("--days", type=int, default=40,
                    help="the days of history the backfill writes, one commit each (on 2 cores its length "
                         "follows them more than its rows: docs/benchmarks.md)")
    ap.add_argument("--plot", type=Path, default=Path(__file__).parent.parent / "docs" / "freshness.svg",
                    help="where the SVG of the three runs goes")
    ap.add_argument("--runs", nargs="+", choices=RUNS, default=list(RUNS),
                    help="some of the runs: their figures alone (`freshness_runs`), no ratios, no plot")
    ap.add_argument("--plot-only", action="store_true", help="plot the last kept run (bench/results.jsonl)")
    args = ap.parse_args()
    if args.plot_only:
        kept = [json.loads(x) for x in (Path(__file__).parent / "results.jsonl").read_text().splitlines()]
        last = next(r for r in kept if r["bench"] == "freshness")
        plot({r["run"]: r for r in last["runs"]}, last["tick_s"], args.plot)
        return
    if args.ticks < BACKFILL_AT:
        ap.error(f"--ticks must be at least {BACKFILL_AT}")
    root = Path(tempfile.mkdtemp(prefix="hudi-ops-bench-"))
    zookeeper = ZookeeperServer(root / "zk")
    try:
        zookeeper.start()
        work = Workload(root / "sources", args.ticks, args.batch_rows, args.backfill_factor, args.days)
        results = {}
        for name in args.runs:
            lock = {} if name == "in_turn" else common.lock_options(zookeeper, name)
            results[name] = Run(name, root, work, args.tick_s, lock).run(None if name == "alone" else name)
        if set(results) != set(RUNS):
            print(json.dumps({"bench": "freshness_runs", "ticks": args.ticks, "tick_s": args.tick_s,
                              "batch_rows": args.batch_rows, "runs": list(results.values())}))
            return
        alone, beside, in_turn = (results[n]["p95_s"] for n in RUNS)
        plot(results, args.tick_s, args.plot)
        print(json.dumps({"bench": "freshness", "ticks": args.ticks, "tick_s": args.tick_s,
                          "batch_rows": args.batch_rows, "backfill_factor": args.backfill_factor,
                          "backfill_rows": work.backfill_rows,
                          "backfill_days": args.days, "runs": list(results.values()),
                          "in_turn_over_beside_p95": round(in_turn / beside, 2),
                          "beside_over_alone_p95": round(beside / alone, 2)}))
    finally:
        zookeeper.stop()
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
