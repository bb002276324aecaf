"""A services group's tick: measure every table once, concurrently, rank the due (table, service) pairs by
the group's policy, and pick at most the budget of them.

What the policies remember between ticks (how long a pair has waited, when a table was last serviced,
its recent runs) is a small `GroupState` the caller keeps: the group's DAG passes it from one tick's run
to the next, the fleet benchmark's simulator holds it in memory.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from hudi_ops.fleet.policies import Candidate, pick
from hudi_ops.format.meta_client import MetaClient
from hudi_ops.read.table_need import TableNeed, measure
from hudi_ops.read.table_services import ARCHIVE, CLEAN, CLUSTERING, COMPACTION

#: the fleet's goal for a MERGE_ON_READ read: at most this many log files to merge per file slice
LOG_FILES_GOAL = 5
#: clustering's: at most this share of small base files
SMALL_FILES_GOAL = 0.5
#: the quota policy counts a table's runs over this many ticks
QUOTA_WINDOW = 12
#: what archival and a clean weigh when due (they keep the timeline and storage lean; reads do not wait on them)
_FLAT_NEED = {CLEAN.name: 0.5, ARCHIVE.name: 0.25}
_DUE_AT_LEAST = 0.1


@dataclass(frozen=True)
class Member:
    """A table of the group: where it is, its services' options, its weight and share of the budget."""

    name: str
    base_path: str
    options: Mapping[str, Mapping[str, str]]  # service -> hoodie.* options, for the services it runs
    priority: float = 1.0
    quota: float = 1.0
    s3: Any = None  # hudi_ops.s3_settings.S3Settings of a table on S3
    ingests: bool = False  # hudi-ops ingests it: a look also says when its ingest last committed


@dataclass
class GroupState:
    tick: int = 0
    waited: dict[str, int] = field(default_factory=dict)  # "table/service" -> ticks due and not run
    last_serviced: dict[str, int] = field(default_factory=dict)  # table -> the tick its last service ran
    runs: list[tuple[int, str]] = field(default_factory=list)  # (tick, table) within QUOTA_WINDOW
    at: float = 0.0  # when the last tick ran (seconds since the epoch; 0: never)
    turns: list[str] = field(default_factory=list)  # tables whose cron fired and whose turn has not run

    def to_dict(self) -> dict[str, Any]:
        return {"tick": self.tick, "waited": self.waited, "last_serviced": self.last_serviced,
                "runs": [list(r) for r in self.runs], "at": self.at, "turns": self.turns}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | None) -> GroupState:
        """The state kept by an earlier tick; ValueError (or TypeError, KeyError) for what no tick wrote."""
        data = data or {}
        return cls(int(data.get("tick", 0)), {str(k): int(v) for k, v in dict(data.get("waited", {})).items()},
                   {str(k): int(v) for k, v in dict(data.get("last_serviced", {})).items()},
                   [(int(t), str(n)) for t, n in data.get("runs", [])], float(data.get("at", 0.0)),
                   [str(n) for n in data.get("turns", [])])


def service_need(need: TableNeed, service: str) -> float:
    """How far toward the fleet's goal a due service's table is (1.0: at the goal). A plan waiting for its
    execution counts as at the goal at least (it holds back what was planned); anything due, as a tenth."""
    if service == COMPACTION.name:
        measured = need.max_log_files / LOG_FILES_GOAL
    elif service == CLUSTERING.name:
        measured = need.small_file_share / SMALL_FILES_GOAL
    else:
        return _FLAT_NEED[service]
    return max(1.0 if service in need.executes else _DUE_AT_LEAST, measured)


def measure_all(members: Mapping[str, Member], *, workers: int = 16) -> dict[str, TableNeed | str]:
    """Each table's need, read concurrently (the work is listing and reading small files); a table that
    cannot be read maps to why, and waits for a later tick: whatever its error, the others are served."""

    def one(member: Member) -> TableNeed | str:
        try:
            return measure(MetaClient.open(member.base_path, s3=member.s3), member.options, freshness=member.ingests)
        except Exception as e:  # one table's unforeseen error must not stop the group's tick
            return f"{type(e).__name__}: {e}"

    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="measure") as pool:
        return dict(zip(members, pool.map(one, members.values()), strict=True))


def plan_tick(state: GroupState, members: Mapping[str, Member], needs: Mapping[str, TableNeed | str], *,
              policy: str, budget: int, cron_due: Callable[[str], bool] = lambda _: True, at: float = 0.0,
              ) -> tuple[list[Candidate], GroupState]:
    """The pairs to run at this tick (at most `budget`, at most one per table), and the state the next
    tick starts from; `at` is when this tick runs. `cron_due(table)`: its own schedule fired since the
    last tick (the `cron` policy's turns, kept until they run)."""
    tick = state.tick + 1
    recent = [(t, n) for t, n in state.runs if t > tick - QUOTA_WINDOW]
    turns = set(state.turns) | {name for name in members if cron_due(name)}
    candidates = []
    for name, need in needs.items():
        if isinstance(need, str):
            continue
        member = members[name]
        for service in need.due():
            candidates.append(Candidate(
                table=name, service=service, need=service_need(need, service), priority=member.priority,
                quota=member.quota, waited=state.waited.get(f"{name}/{service}", 0),
                since_serviced=tick - state.last_serviced.get(name, 0),
                recent_runs=sum(1 for _, n in recent if n == name), cron_due=name in turns))
    chosen = pick(policy, candidates, budget)
    run = {c.key for c in chosen}
    waited = {f"{c.table}/{c.service}": c.waited + 1 for c in candidates if c.key not in run}
    last = {**state.last_serviced, **{c.table: tick for c in chosen}}
    served = {c.table for c in chosen}
    due_tables = {c.table for c in candidates}
    return chosen, GroupState(tick, waited, last, recent + [(tick, c.table) for c in chosen], at,
                              sorted(t for t in turns if t in due_tables and t not in served))
