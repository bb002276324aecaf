"""Table services across a fleet: a services group's policies at one budget.

24 MERGE_ON_READ tables share a budget of BUDGET service jobs at once; their write rates are Zipf-skewed
(the hottest about 10x the median). Every TICK_MINUTES a tick measures each table and each policy of
hudi_ops.fleet.policies picks what runs (hudi_ops.fleet.scheduler.plan_tick, the group DAG's own code).
Per policy, over SIM_TICKS ticks: log files per file slice at each tick (what a read merges; p50, p99,
max), the share of small files, the longest a due service waited, the service jobs run, their job
time, and clusterings that lost to a writer. The same writes for every policy.

Eight hours of 24 tables' writes and services are more than these 2 cores run in a benchmark, so a
simulator runs the fleet, calibrated in the same run:
- durations: real spark-submit jobs of each service on real tables (a compaction of few and of many
  log files: a line through both; a clean; a clustering);
- effects: a small real run checks the simulator: REAL_TABLES tables, written for REAL_TICKS ticks in
  this process, each tick measured by the control plane on the real tables (hudi_ops.read.table_need),
  planned by the need policy, and its picks run as real spark-submit jobs; the simulator, given the
  same writes, must pick the same services and see the same log files per slice at every tick.

The model: a table's commit is an upsert that touches every file group (one log file per slice); with
INSERT_SHARE it also adds new keys, one small file group. Compaction is due after COMPACT_AFTER delta
commits (Hudi's hoodie.compact.inline.max.delta.commits) and leaves no log file; clustering is due with
two small file groups and merges them into one; a clean is due after either (one file version kept).
A clustering whose table commits during it yields to the writer (hudi-ops' ingestion first) and stays
due. The `cron` policy is each table's own schedule, every CRON_EVERY ticks, staggered.

One JSON line per policy (over SEEDS write schedules), then a last line with all of them, the calibration
and the check; with
--plot, an SVG of each policy's share of file slices with more than N log files, the goal drawn in.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import statistics
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import common  # bench/, the script's folder
import pyarrow as pa
import pyarrow.parquet as pq

from hudi_ops.fleet.policies import POLICIES
from hudi_ops.fleet.scheduler import LOG_FILES_GOAL, GroupState, Member, measure_all, plan_tick
from hudi_ops.job_specs import CleanSpec, ClusterSpec, CompactSpec, IngestSpec
from hudi_ops.read.service_work import ServiceWork
from hudi_ops.read.table_need import TableNeed
from hudi_ops.read.table_services import inline_off
from hudi_ops.spark.launch import spark_submit_command

TABLES, BUDGET, SIM_TICKS, TICK_MINUTES = 24, 4, 96, 5
SEEDS = 10  # write schedules: each policy's figures are over all of them
TOP_RATE = 1.0  # the hottest table's commits per tick
ZIPF = 0.91  # rank r writes TOP_RATE / r**ZIPF: the hottest ~10x the median (rank 12.5)
FILE_GROUPS = 4  # each table's, before inserts add small ones
INSERT_SHARE = 0.2
COMPACT_AFTER = 4
CRON_EVERY = 6  # ticks: every 30 minutes
REAL_TABLES, REAL_TICKS, REAL_BUDGET = 3, 8, 1
DAYS = [f"2026-11-{d:02d}" for d in range(1, FILE_GROUPS + 1)]  # a partition, hence a file group, per day
OPTIONS = {
    "compaction": {"hoodie.compact.inline.max.delta.commits": str(COMPACT_AFTER)},
    "clustering": {},  # Hudi's small-file limit: every file of these small tables is small
    "clean": {"hoodie.cleaner.policy": "KEEP_LATEST_FILE_VERSIONS", "hoodie.cleaner.fileversions.retained": "1"},
}
#: every write: each new key in a new file group (no bin-packing into small files), services left to the group
WRITE_OPTIONS = {"hoodie.parquet.small.file.limit": "0",
                 **inline_off(("compaction", "clustering", "clean"))}


@dataclass
class SimTable:
    """A table as the simulator keeps it."""

    name: str
    rate: float
    logs: list[int] = field(default_factory=lambda: [0] * FILE_GROUPS)  # per big file group's slice
    small: list[int] = field(default_factory=list)  # per small file group's slice: its log files
    deltas: int = 1  # delta commits since the last compaction (a table's first commit is one)
    superseded: bool = False  # a compaction or clustering left old slices for a clean

    def commit(self, rng: random.Random, *, inserts: bool = True) -> None:
        self.logs = [n + 1 for n in self.logs]
        self.small = [n + 1 for n in self.small]
        self.deltas += 1
        if inserts and rng.random() < INSERT_SHARE:
            self.small.append(0)  # the new keys' file group: a base file, no log yet

    def need(self) -> TableNeed:
        slices = self.logs + self.small
        return TableNeed(log_files=tuple(slices), small_files=len(self.small), slices=len(slices), work={
            "compaction": ServiceWork(self.deltas >= COMPACT_AFTER, ""),
            "clustering": ServiceWork(len(self.small) >= 2, ""),
            "clean": ServiceWork(self.superseded, "")})

    def run(self, service: str) -> None:
        if service == "compaction":
            self.logs, self.small, self.deltas = [0] * len(self.logs), [0] * len(self.small), 0
        elif service == "clustering":
            self.logs, self.small = [*self.logs, 0], []
        self.superseded = service != "clean"


@dataclass(frozen=True)
class Durations:
    """Service job seconds, from the real jobs of the calibration."""

    compaction_fixed: float
    compaction_per_log: float
    clustering: float
    clean: float

    def of(self, service: str, table: SimTable) -> float:
        if service == "compaction":
            return self.compaction_fixed + self.compaction_per_log * sum(table.logs + table.small)
        return self.clustering if service == "clustering" else self.clean


def rates(n: int) -> list[float]:
    return [TOP_RATE / (rank + 1) ** ZIPF for rank in range(n)]


def write_schedule(n: int, ticks: int, seed: int) -> list[list[int]]:
    """Commits per tick per table (Poisson at each table's rate), the same for every policy."""
    rng = random.Random(seed)
    return [[_poisson(rng, rate) for rate in rates(n)] for _ in range(ticks)]


def _poisson(rng: random.Random, mean: float) -> int:
    limit, k, p = math.exp(-mean), 0, rng.random()
    while p > limit:
        k, p = k + 1, p * rng.random()
    return k


def simulate(policy: str, writes: list[list[int]], budget: int, durations: Durations, *, seed: int,
             compaction_only: bool = False) -> dict:
    """One policy over the writes; per tick the picks and the log files per slice it saw. `compaction_only`:
    upserts alone, compaction and clean alone (the real check's tables)."""
    rng = random.Random(seed)  # inserts and conflicts: the same draws for every policy
    tables = [SimTable(f"t{i:02d}", rate) for i, rate in enumerate(rates(len(writes[0])))]
    options = {s: OPTIONS[s] for s in (("compaction", "clean") if compaction_only else OPTIONS)}
    members = {t.name: Member(t.name, t.name, options) for t in tables}
    state, due_since = GroupState(), {}
    logs_seen, small_share, per_tick, jobs, job_s, conflicts, longest = [], [], [], 0, 0.0, 0, 0
    for tick, commits in enumerate(writes):
        for table, n in zip(tables, commits, strict=True):
            for _ in range(n):
                table.commit(rng, inserts=not compaction_only)
        needs = {t.name: _only(t.need(), options) for t in tables}
        for t in tables:
            for service in needs[t.name].due():
                due_since.setdefault((t.name, service), tick)
        seen = [n for t in tables for n in needs[t.name].log_files]
        logs_seen += seen
        small_share.append(sum(len(t.small) for t in tables) / sum(len(t.logs) + len(t.small) for t in tables))
        chosen, state = plan_tick(state, members, needs, policy=policy, budget=budget,
                                  cron_due=lambda name, now=tick: (now + int(name[1:])) % CRON_EVERY == 0)
        by_name = {t.name: t for t in tables}
        for c in chosen:
            table, seconds = by_name[c.table], durations.of(c.service, by_name[c.table])
            jobs, job_s = jobs + 1, job_s + seconds
            if c.service == "clustering" and rng.random() < 1 - math.exp(-table.rate * seconds / (TICK_MINUTES * 60)):
                conflicts += 1  # a commit landed while it ran: it yields, and stays due
                continue
            longest = max(longest, tick - due_since.pop((c.table, c.service)))
            table.run(c.service)
        per_tick.append({"picks": sorted(f"{c.service} of {c.table}" for c in chosen), "max_logs": max(seen)})
    longest = max([longest, *(len(writes) - 1 - since for since in due_since.values())])
    return {"policy": policy, "logs_seen": logs_seen, "small_share": small_share, "longest_wait_ticks": longest,
            "jobs": jobs, "job_s": job_s, "conflicts": conflicts, "per_tick": per_tick}


def simulate_all(durations: Durations, seed: int) -> dict[str, list[dict]]:
    """Every policy over the same SEEDS write schedules."""
    schedules = [write_schedule(TABLES, SIM_TICKS, seed + i) for i in range(SEEDS)]
    return {p: [simulate(p, w, BUDGET, durations, seed=seed + i) for i, w in enumerate(schedules)] for p in POLICIES}


def figures(runs: list[dict]) -> dict:
    """A policy's figures over its runs (one per write schedule): percentiles of every sample, the worst
    wait, totals per run on average."""
    logs = [n for r in runs for n in r["logs_seen"]]
    share = [x for r in runs for x in r["small_share"]]
    return {"policy": runs[0]["policy"], "runs": len(runs),
            "log_files_per_slice": {"p50": _percentile(logs, 50), "p99": _percentile(logs, 99), "max": max(logs)},
            "small_file_share": {"mean": round(statistics.mean(share), 3), "max": round(max(share), 3)},
            "longest_wait_ticks": max(r["longest_wait_ticks"] for r in runs),
            "runs_with_a_wait_over_2_ticks": sum(r["longest_wait_ticks"] > 2 for r in runs),
            "jobs_per_run": round(statistics.mean(r["jobs"] for r in runs), 1),
            "job_minutes_per_run": round(statistics.mean(r["job_s"] for r in runs) / 60, 1),
            "clusterings_yielded_to_writers": sum(r["conflicts"] for r in runs)}


def _only(need: TableNeed, options: dict) -> TableNeed:
    return TableNeed(need.log_files, need.small_files, need.slices, work={s: w for s, w in need.work.items()
                                                                         if s in options})


def _percentile(values: list[int], q: int) -> float:
    ordered = sorted(values)
    return float(ordered[min(len(ordered) - 1, math.ceil(q / 100 * len(ordered)) - 1)])


class RealTable:
    """A real MERGE_ON_READ table, written in this process's session, serviced by spark-submit jobs."""

    def __init__(self, root: Path, name: str, spark) -> None:
        self.base, self.landing, self.spark, self.name, self.files = root / name, root / f"{name}-in", spark, name, 0
        self.landing.mkdir(parents=True)
        self.days = {f"k{i}": DAYS[i % FILE_GROUPS] for i in range(5 * FILE_GROUPS)}  # key -> its partition
        self.commit()

    def commit(self, *, new_keys: int = 0) -> None:
        """An upsert of every key (a log file in every slice), and `new_keys` new ones in one partition."""
        from hudi_ops.spark.__main__ import main

        first = len(self.days)
        self.days.update({f"k{i}": DAYS[0] for i in range(first, first + new_keys)})
        self.files += 1
        pq.write_table(pa.table({"key": list(self.days), "dt": list(self.days.values()),
                                 "ts": [self.files] * len(self.days)}), self.landing / f"{self.files:04d}.parquet")
        spec = IngestSpec(base_path=str(self.base), table_name=self.name, source_path=str(self.landing),
                          record_key_field="key", partition_path_field="dt", ordering_field="ts",
                          table_type="MERGE_ON_READ", hoodie_conf=WRITE_OPTIONS)
        assert main(spec.to_argv(), spark=self.spark) == 0

    def service(self, service: str, options: dict[str, str] | None = None) -> float:
        """Runs it as a job of its own, which must do its work; its wall seconds."""
        options = OPTIONS[service] if options is None else options
        spec = {"compaction": CompactSpec, "clustering": ClusterSpec, "clean": CleanSpec}[service](
            base_path=str(self.base), hoodie_conf=options)
        started = time.perf_counter()
        done = subprocess.run(spark_submit_command(spec.to_argv(), conf=common.CONF, spark_submit=common.SPARK_SUBMIT),
                              capture_output=True, text=True, check=False)
        took = time.perf_counter() - started
        result = json.loads([x for x in done.stdout.splitlines() if x.startswith("{")][-1])
        assert done.returncode == 0 and result["instant"] and result["files"], done.stdout[-3000:]
        return took


def calibrate(root: Path, spark) -> Durations:
    few, many, small = RealTable(root, "cal_few", spark), RealTable(root, "cal_many", spark), \
        RealTable(root, "cal_small", spark)
    for _ in range(2):
        few.commit()
    for _ in range(8):
        many.commit()
    for _ in range(3):
        small.commit(new_keys=5)
    logs_few, logs_many = 2 * FILE_GROUPS, 8 * FILE_GROUPS
    now = {"hoodie.compact.inline.max.delta.commits": "1"}  # whatever the count: calibrate on real work
    t_few, t_many = few.service("compaction", now), many.service("compaction", now)
    per_log = max(0.0, (t_many - t_few) / (logs_many - logs_few))
    return Durations(round(t_few - per_log * logs_few, 2), round(per_log, 3), round(small.service("clustering"), 2),
                     round(many.service("clean"), 2))


def check(root: Path, spark, durations: Durations, seed: int) -> dict:
    """The simulator against a real run of the same writes: the need policy's picks and the log files per
    slice, tick by tick."""
    writes = write_schedule(REAL_TABLES, REAL_TICKS, seed)
    simulated = simulate("need", writes, REAL_BUDGET, durations, seed=seed, compaction_only=True)["per_tick"]
    tables = [RealTable(root, f"t{i:02d}", spark) for i in range(REAL_TABLES)]
    options = {s: OPTIONS[s] for s in ("compaction", "clean")}
    members = {t.name: Member(t.name, str(t.base), options) for t in tables}
    state, real = GroupState(), []
    for commits in writes:
        for table, n in zip(tables, commits, strict=True):
            for _ in range(n):
                table.commit()
        needs = measure_all(members)
        unread = {name: why for name, why in needs.items() if isinstance(why, str)}
        assert not unread, unread
        seen = [n for need in needs.values() for n in need.log_files]
        chosen, state = plan_tick(state, members, needs, policy="need", budget=REAL_BUDGET)
        for c in chosen:
            next(t for t in tables if t.name == c.table).service(c.service)
        real.append({"picks": sorted(f"{c.service} of {c.table}" for c in chosen), "max_logs": max(seen)})
    pairs = list(zip(real, simulated, strict=True))
    return {"ticks": REAL_TICKS, "tables": REAL_TABLES, "budget": REAL_BUDGET, "commits": sum(map(sum, writes)),
            "services_run": sum(len(r["picks"]) for r in real),
            "picks_agree": sum(r["picks"] == s["picks"] for r, s in pairs),
            "max_log_files_agree": sum(r["max_logs"] == s["max_logs"] for r, s in pairs),
            "disagreements": [{"tick": i, "real": r, "simulated": {k: s[k] for k in ("picks", "max_logs")}}
                              for i, (r, s) in enumerate(pairs) if r["picks"] != s["picks"]
                              or r["max_logs"] != s["max_logs"]]}


def plot(runs: dict[str, list[dict]], path: Path) -> None:
    """Per policy, over all its runs: the share of (file slice, tick) samples whose read merges more than
    N log files. The goal (p99 at most 5) is the curve under 1% from N = 5 on."""
    import matplotlib.ticker

    fig, ax = common.line_chart()
    for policy, policy_runs in runs.items():
        logs = [n for r in policy_runs for n in r["logs_seen"]]
        xs = list(range(max(logs) + 1))
        ax.step(xs, [100 * sum(n > x for n in logs) / len(logs) for x in xs], where="post", linewidth=1.5,
                label=f"{policy}: p99 {figures(policy_runs)['log_files_per_slice']['p99']:g}, "
                      f"longest wait {figures(policy_runs)['longest_wait_ticks']} ticks")
    ax.axvline(LOG_FILES_GOAL, color="black", linestyle="--", linewidth=1)
    ax.axhline(1, color="black", linestyle=":", linewidth=1)
    ax.annotate(f"goal: at most 1% of slices with more than {LOG_FILES_GOAL}", (LOG_FILES_GOAL + 0.2, 1.2),
                fontsize="small")
    ax.set_yscale("log")
    ax.yaxis.set_major_formatter(matplotlib.ticker.FormatStrFormatter("%g%%"))
    ax.set_xlabel("N: log files in a file slice, which a read merges")
    ax.set_ylabel("file slices with more than N (% of slices x ticks)")
    ax.set_title(f"{TABLES} MERGE_ON_READ tables, {BUDGET} service jobs at once, "
                 f"{SIM_TICKS} ticks of {TICK_MINUTES} min, {len(next(iter(runs.values())))} runs")
    ax.legend(loc="upper right", fontsize="small")
    common.save_chart(fig, path)


def main() -> None:
    ap = argparse.ArgumentParser()
    # the policies' constants were chosen on the schedules of seeds 2711-2730: the figures are of others
    ap.add_argument("--seed", type=int, default=9001)
    ap.add_argument("--plot", type=Path, default=None, help="write the chart here (an .svg; docs/fleet.svg)")
    ap.add_argument("--plot-only", action="store_true",
                    help="simulate again with the last kept run's calibration (bench/results.jsonl) and plot")
    args = ap.parse_args()
    if args.plot_only:
        kept = [json.loads(x) for x in (Path(__file__).parent / "results.jsonl").read_text().splitlines()]
        durations = Durations(**next(r for r in kept if r["bench"] == "fleet")["calibration_s"])
        plot(simulate_all(durations, args.seed), args.plot)
        return
    from hudi_ops.spark.session import spark_session

    spark = spark_session("hudi-ops-bench-fleet")
    with tempfile.TemporaryDirectory(prefix="hudi-ops-bench-fleet-") as work:
        durations = calibrate(Path(work) / "calibration", spark)
        checked = check(Path(work) / "check", spark, durations, args.seed)
    runs = simulate_all(durations, args.seed)
    results = [figures(r) for r in runs.values()]
    top = rates(TABLES)
    setting = {"tables": TABLES, "budget": BUDGET, "ticks": SIM_TICKS, "tick_minutes": TICK_MINUTES,
               "hottest_over_median_rate": round(top[0] / statistics.median(top), 1),
               "compact_after_delta_commits": COMPACT_AFTER, "cron_every_ticks": CRON_EVERY}
    for r in results:
        print(json.dumps({"bench": "fleet_policy", **setting, **r}))
    if args.plot:
        plot(runs, args.plot)
    print(json.dumps({"bench": "fleet", **setting, "calibration_s": durations.__dict__, "check": checked,
        "policies": {r["policy"]: {k: v for k, v in r.items() if k != "policy"} for r in results}}))


if __name__ == "__main__":
    main()
