"""Policies that pick, at a tick, which due (table, service) pairs of a services group run, at most the
group's budget of them.

- `cron`: per-table cron within the group: a table's turn comes when its own schedule fires and runs
  the first of its due services in a services DAG's order; a turn the budget could not take is kept,
  the longest-waiting first. (A table's own services DAG, outside groups, also runs after each commit
  of its writers and runs all its due services in one run, with no budget across tables.)
- `balanced`: the longest since its table was last serviced first (Apache Amoro's "balanced").
- `quota`: the lowest quota occupation first: the share of the group's recent service runs a table had,
  over its quota (Amoro's "quota").
- `need`: hudi-ops' own: the most needed first, need weighted by the table's priority and aged by the
  ticks it has waited; a pair that has waited WAIT_BOUND ticks goes before every other, so that a table
  with little need is serviced within that bound whenever the budget can serve the group at all.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from hudi_ops.read.table_services import SERVICES

POLICIES = ("cron", "balanced", "quota", "need")
#: how much a tick of waiting adds to a due pair's need, per unit of need: a pair waiting 1 / AGING
#: ticks ranks as if its need had doubled
AGING = 0.5
#: ticks a due pair waits at most under the `need` policy, while the budget is not all taken by such pairs
WAIT_BOUND = 2


@dataclass(frozen=True)
class Candidate:
    """A due (table, service) pair at a tick, with what the policies rank it by."""

    table: str
    service: str
    need: float  # how far toward the fleet's goal (hudi_ops.fleet.scheduler.service_need): 1.0 at it
    priority: float = 1.0  # the table's weight in the group
    quota: float = 1.0  # the table's share of the group's budget
    waited: int = 0  # ticks it has been due without running
    since_serviced: int = 0  # ticks since any service of its table last ran
    recent_runs: int = 0  # its table's service runs in the group's recent window
    cron_due: bool = True  # its table's turn: its own schedule fired at this tick, or at one not yet served

    @property
    def key(self) -> tuple[str, str]:
        return self.table, self.service


def pick(policy: str, candidates: Sequence[Candidate], budget: int) -> list[Candidate]:
    """The pairs to run now, best first: at most `budget`, at most one per table (a table's services run
    one at a time, as its own services DAG runs them), each table's best pair by the policy's rank."""
    if policy not in RANKS:
        raise ValueError(f"unknown services-group policy {policy!r}; use one of {', '.join(POLICIES)}")
    by_table: dict[str, list[Candidate]] = {}
    for candidate in sorted((c for c in candidates if policy != "cron" or c.cron_due), key=RANKS[policy]):
        by_table.setdefault(candidate.table, []).append(candidate)
    return [pairs[0] for pairs in sorted(by_table.values(), key=lambda pairs: _table_rank(policy, pairs))][:budget]


def _table_rank(policy: str, pairs: list[Candidate]) -> tuple:
    """Tables in the order of their best pair; under `need`, a table's pairs add up: one with several due
    services needs as many ticks to serve them all, one at a time."""
    if policy == "need":
        return pairs[0].waited < WAIT_BOUND, -sum(map(urgency, pairs)), pairs[0].table
    return RANKS[policy](pairs[0])


def urgency(c: Candidate) -> float:
    """The need policy's score: need times priority, grown by the wait."""
    return c.need * c.priority * (1 + AGING * c.waited)


#: a table's services in a services DAG's order: compaction first
_SERVICE_ORDER = {name: i for i, name in enumerate(SERVICES)}

RANKS: dict[str, Callable[[Candidate], tuple]] = {
    # the longest-waiting turn first
    "cron": lambda c: (-c.waited, c.table, _SERVICE_ORDER[c.service]),
    "balanced": lambda c: (-c.since_serviced, -c.need, c.table),
    "quota": lambda c: (c.recent_runs / c.quota if c.quota > 0 else float("inf"), -c.need, c.table),
    "need": lambda c: (c.waited < WAIT_BOUND, -urgency(c), c.table),
}
