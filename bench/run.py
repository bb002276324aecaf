"""Run every benchmark; each prints one JSON line of figures and ratios measured in the same run.

`make bench` runs them all, keeps their lines in `bench/results.jsonl` (each with the day it was
measured) and writes the table of docs/benchmarks.md (between its `bench:begin` and `bench:end` markers)
from them; a benchmark that fails keeps its last line. `--only NAME ...` runs some; `--table-only`
rewrites the table from the kept lines.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).parent
RESULTS = HERE / "results.jsonl"
#: the document whose markers hold the table `make bench` writes
TABLE_DOC = HERE.parent / "docs" / "benchmarks.md"
BEGIN, END = "<!-- bench:begin -->", "<!-- bench:end -->"

#: the benchmarks; the folder's other files are what they start (spark-submit applications) or share
BENCHMARKS = ("freshness.py", "upsert_hudi_vs_naive.py", "platform_overhead.py", "commit_contention.py",
              "wasted_work.py", "services_idle_tick.py", "mor_vs_cow.py", "clean_planning.py", "job_fixed_cost.py",
              "fleet.py", "fleet_scale.py", "kafka_freshness.py", "deferrable_backfill.py")
#: the lines kept, in the table's order: each benchmark's, and the Kafka catch-up that kafka_freshness.py also
#: measures alone (`--runs` with none, a long backlog)
KEPT = (*(n.removesuffix(".py") for n in BENCHMARKS), "kafka_catch_up")


def _freshness(r: dict) -> list[tuple[str, str]]:
    p95 = {x["run"]: x["p95_s"] for x in r["runs"]}
    factor = r["backfill_rows"] // (r["ticks"] * r["batch_rows"])
    return [(f"ingest latency p95 over {r['ticks']} ticks beside a {factor}x backfill of {r['backfill_days']} "
             "days: single writer / hudi-ops (goal >= 5)",
             f"**{r['in_turn_over_beside_p95']}** ({p95['in_turn']} s / {p95['beside']} s)"),
            ("ingest latency p95 beside a backfill / alone (goal <= 1.5)",
             f"**{r['beside_over_alone_p95']}** ({p95['beside']} s / {p95['alone']} s)")]


def _upsert(r: dict) -> list[tuple[str, str]]:
    out = []
    for c in r["curve"]:
        for b in c["results"]:
            ratios = {k.removeprefix("naive_over_"): v for k, v in b.items() if k.startswith("naive_over_")}
            best = max(ratios, key=ratios.get)
            out.append((f"upsert {b['upsert']}, {c['rows']:,} rows: naive rewrite / Hudi (best index)",
                        f"**{ratios[best]}** ({best}; " + ", ".join(f"{k} {v}" for k, v in ratios.items()) + ")"))
    return out


def _overhead(r: dict) -> list[tuple[str, str]]:
    return [("the same upsert: hudi-ops job / bare PySpark (goal <= 1.1)", f"**{r['hudi_ops_over_bare']}**"),
            ("idle ingest tick: spark-submit / control-plane check (goal >= 50)",
             f"**{r['idle_spark_submit_over_check']}**")]


def _contention(r: dict) -> list[tuple[str, str]]:
    return [(f"commits per minute, {x['writers']} writers on disjoint partitions / 1",
             f"**{x['commits_per_min_vs_1']}**") for x in r["results"] if x["writers"] > 1]


def _wasted(r: dict) -> list[tuple[str, str]]:
    return [(f"{x['setting']}, {x['writers']} writers on the same keys: commits/min, conflicts, s thrown away each",
             f"**{x['commits_per_min']}**, {x['conflicts']}, {x['wasted_s_per_conflict']} s")
            for x in r["results"] if x["writers"] > 1]


def _idle(r: dict) -> list[tuple[str, str]]:
    return [("idle services tick: spark-submits / control-plane checks", f"**{r['spark_submits_over_checks']}**")]


def _mor(r: dict) -> list[tuple[str, str]]:
    return [("upserts: COPY_ON_WRITE / MERGE_ON_READ", f"**{r['upserts_cow_over_mor']}**"),
            ("snapshot read: MERGE_ON_READ before compaction / COPY_ON_WRITE", f"**{r['read_mor_before_over_cow']}**")]


def _clean(r: dict) -> list[tuple[str, str]]:
    last = r["last_over_first"]
    return [(f"incremental clean plan, {last['commits']} commits (last / first)", f"**{last['incremental_plan_s']}**")]


def _fixed_cost(r: dict) -> list[tuple[str, str]]:
    names = {"idle_service": "a service job with nothing to do", "ingest": "a 1,000-row ingest",
             "ingest_two_at_once": "two 1,000-row ingests at once"}
    return [(f"{name}: fixed cost as a plain PySpark application / as hudi-ops runs it (goal >= 2)",
             f"**{r[f'{job}_fixed_plain_over_hudi_ops']}** ({r['plain_pyspark'][job]['fixed_s']} s / "
             f"{r['hudi_ops'][job]['fixed_s']} s; the whole job {r[f'{job}_total_plain_over_hudi_ops']})")
            for job, name in names.items()]


def _fleet(r: dict) -> list[tuple[str, str]]:
    need, cron = r["policies"]["need"], r["policies"]["cron"]
    setting = f"{r['tables']} MERGE_ON_READ tables, {r['budget']} jobs at once, {r['ticks']} ticks"
    return [(f"{setting}: p99 log files per file slice, cron / need (goal: need <= 5)",
             f"**{cron['log_files_per_slice']['p99'] / need['log_files_per_slice']['p99']:.2f}** "
             f"({cron['log_files_per_slice']['p99']:g} / {need['log_files_per_slice']['p99']:g})"),
            (f"{setting}: the longest a due service waited, cron / need (goal: need <= 2 ticks)",
             f"**{cron['longest_wait_ticks'] / need['longest_wait_ticks']:.1f}** ({cron['longest_wait_ticks']} / "
             f"{need['longest_wait_ticks']} ticks)")]


def _fleet_scale(r: dict) -> list[tuple[str, str]]:
    tick, parse = r["tick"], r["parse"]
    return [(f"a tick over {r['tables']} tables: services DAGs' checks / a services group's look (goal: group < 60 s)",
             f"**{r['tick_services_dags_over_group']}** ({tick['services_dags_s']} s / {tick['group_s']} s)"),
            (f"the DAG file of {r['tables']} tables parsed: a services DAG each / a services group (goal < 5 s)",
             f"**{r['parse_own_over_grouped']}** ({parse['own_services_dags_s']} s / {parse['grouped_s']} s)")]


def _kafka_freshness(r: dict) -> list[tuple[str, str]]:
    rows = []
    if r["runs"]:
        p95 = {x["run"]: x["p95_s"] for x in r["runs"]}
        stream = next(x for x in r["runs"] if x["run"] == "streaming")
        every = f"a burst every {r['tick_s']:g} s"
        rows += [(f"Kafka to visible p95, {every}: hudi-ops on that schedule / a streaming job with that trigger "
                  f"(goal <= 1.2; the streaming job holds {stream['idle_rss_mib']} MiB idle)",
                  f"**{r['scheduled_over_streaming_p95']}** ({p95['scheduled']} s / {p95['streaming']} s)"),
                 (f"Kafka to visible p95, {every}: hudi-ops on new messages / the streaming job",
                  f"**{r['on_messages_over_streaming_p95']}** ({p95['on_messages']} s / {p95['streaming']} s)"),
                 (f"Kafka to visible p95 beside a {r['backfill_factor']}x backfill: hudi-ops / the streaming job alone",
                  f"**{r['beside_over_streaming_p95']}** ({p95['beside']} s / {p95['streaming']} s)")]
    if c := r.get("catch_up"):
        step = f", at most {c['step']:,} per commit" if c.get("step") else ""
        rows.append((f"catch-up of {c['backlog']:,} messages{step}, events/s per core: hudi-ops / the streaming job "
                     "(goal >= 1)", f"**{c['hudi_ops_over_streaming_rate']}** ({c['hudi_ops_events_per_s_per_core']:,} "
                                    f"/ {c['streaming_events_per_s_per_core']:,})"))
    return rows


def _deferrable(r: dict) -> list[tuple[str, str]]:
    waits, deferred = r["results"]["submit_waits"], r["results"]["deferred"]
    setting = f"a {r['days']}-day backfill in YARN cluster mode, all days at once"
    return [(f"{setting}: worker slot-seconds, spark-submit waiting / deferrable",
             f"**{r['slot_s_submit_waits_over_deferred']}** ({waits['slot_s']:,} / {deferred['slot_s']:,})"),
            (f"{setting}: worker memory (MiB-seconds), spark-submit waiting / deferrable",
             f"**{r['memory_submit_waits_over_deferred']}** "
             f"({waits['memory_mib_s']:,} / {deferred['memory_mib_s']:,})"),
            (f"{setting}: wall time, deferrable / spark-submit waiting (goal <= 1)",
             f"**{r['wall_deferred_over_submit_waits']}** ({deferred['wall_s']} s / {waits['wall_s']} s)")]


ROWS: dict[str, Callable[[dict], list[tuple[str, str]]]] = {
    "freshness": _freshness, "upsert_hudi_vs_naive": _upsert, "platform_overhead": _overhead,
    "commit_contention": _contention, "wasted_work": _wasted, "services_idle_tick": _idle, "mor_vs_cow": _mor,
    "clean_planning": _clean, "job_fixed_cost": _fixed_cost, "fleet": _fleet, "fleet_scale": _fleet_scale,
    "kafka_freshness": _kafka_freshness, "kafka_catch_up": _kafka_freshness, "deferrable_backfill": _deferrable}


def table(results: list[dict]) -> str:
    lines = ["| benchmark (run on) | measure | ratio |", "|---|---|---|"]
    for r in results:
        for measure, value in ROWS[r["bench"]](r):
            lines.append(f"| `{r['bench']}` ({r['measured']}) | {measure} | {value} |")
    return "\n".join(lines)


def kept_results() -> list[dict]:
    """The kept lines, in the benchmarks' order."""
    kept = {r["bench"]: r for r in map(json.loads, RESULTS.read_text().splitlines())} if RESULTS.exists() else {}
    return [kept[n] for n in KEPT if n in kept]


def doc_table(text: str) -> str:
    """What the document holds between its markers."""
    return text.split(BEGIN, 1)[1].split(END, 1)[0].strip()


def write_doc(results: list[dict]) -> None:
    text = TABLE_DOC.read_text()
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    TABLE_DOC.write_text(f"{head}{BEGIN}\n{table(results)}\n{END}{tail}")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", nargs="*", default=None, help="benchmark names, e.g. freshness wasted_work")
    ap.add_argument("--table-only", action="store_true")
    args = ap.parse_args()
    names = [n.removesuffix(".py") for n in BENCHMARKS]
    unknown = set(args.only or ()) - set(names)
    if unknown:
        ap.error(f"no benchmark named {', '.join(sorted(unknown))}; they are {', '.join(names)}")
    kept = {r["bench"]: r for r in kept_results()}
    failed = 0
    if not args.table_only:
        for script in BENCHMARKS:
            name = script.removesuffix(".py")
            if args.only is not None and name not in args.only:
                continue
            done = subprocess.run([sys.executable, str(HERE / script)], stdout=subprocess.PIPE, text=True, check=False)
            sys.stdout.write(done.stdout)
            lines = [ln for ln in done.stdout.splitlines() if ln.startswith("{")]
            if done.returncode != 0 or not lines:
                failed = 1
                continue
            line = json.loads(lines[-1])
            kept[line["bench"]] = {**line, "measured": dt.date.today().isoformat()}
        RESULTS.write_text("".join(json.dumps(kept[n]) + "\n" for n in KEPT if n in kept))
    write_doc(kept_results())
    return failed


if __name__ == "__main__":
    sys.exit(main())
