"""The services group's policies and its tick, on candidates made here (the tables' needs are measured
in tests/component/test_table_need.py)."""

from __future__ import annotations

import pytest

from hudi_ops.fleet.policies import WAIT_BOUND, Candidate, pick
from hudi_ops.fleet.scheduler import GroupState, Member, plan_tick
from hudi_ops.read.service_work import ServiceWork
from hudi_ops.read.table_need import TableNeed


def c(table, need=1.0, **kw):
    return Candidate(table=table, service=kw.pop("service", "compaction"), need=need, **kw)


def names(chosen):
    return [x.table for x in chosen]


def test_need_runs_the_most_needed_first_weighted_by_priority_within_the_budget():
    pairs = [c("cold", 1.0), c("hot", 4.0), c("warm", 2.0), c("vip", 1.5, priority=2.0)]
    assert names(pick("need", pairs, 2)) == ["hot", "vip"]
    assert names(pick("need", pairs, 10)) == ["hot", "vip", "warm", "cold"]


def test_need_ages_a_waiting_pair_so_a_cold_table_is_not_starved():
    assert names(pick("need", [c("hot", 3.0), c("warm", 1.0, waited=1), c("cool", 0.5)], 2)) == ["hot", "warm"]
    assert names(pick("need", [c("hot", 1.2), c("cool", 0.5, waited=1), c("warm", 1.0)], 2)) == ["hot", "warm"]
    assert names(pick("need", [c("hot", 1.1), c("cool", 0.5, waited=1)], 1)) == ["hot"]  # 0.5 x (1 + 0.5 x 1)
    assert names(pick("need", [c("hot", 0.7), c("cool", 0.5, waited=1)], 1)) == ["cool"]  # aged past it


def test_need_runs_what_has_waited_its_bound_before_anything_else():
    at_bound = c("cold", 0.1, waited=WAIT_BOUND)
    assert names(pick("need", [c("hot", 9.0), at_bound], 1)) == ["cold"]
    assert names(pick("need", [c("hot", 9.0), at_bound, c("idle", 0.2, waited=WAIT_BOUND + 3)], 2)) == \
        ["idle", "cold"]  # among them, the most urgent first


def test_a_table_runs_one_service_at_a_time_and_never_more_than_the_budget():
    pairs = [c("a", 5.0), c("a", 4.0, service="clean"), c("b", 1.0), c("c", 1.0)]
    chosen = pick("need", pairs, 2)
    assert [x.key for x in chosen] == [("a", "compaction"), ("b", "compaction")]
    assert pick("need", pairs, 0) == []


def test_cron_takes_only_the_tables_whose_schedule_fires_in_table_order_whatever_their_need():
    pairs = [c("b", 1.0), c("a", 9.0, cron_due=False), c("c", 5.0)]
    assert names(pick("cron", pairs, 5)) == ["b", "c"]
    # a table's turn runs the first of its due services in a services DAG's order
    turn = [c("b", 1.0, service="clean"), c("b", 0.2, service="compaction"), c("b", 1.0, service="clustering")]
    assert [x.service for x in pick("cron", turn, 5)] == ["compaction"]


def test_balanced_takes_the_longest_unserviced_and_quota_the_least_occupied():
    pairs = [c("a", 9.0, since_serviced=1, recent_runs=4, quota=2.0), c("b", 1.0, since_serviced=7, recent_runs=1),
             c("c", 1.0, since_serviced=3, recent_runs=3, quota=1.0)]
    assert names(pick("balanced", pairs, 3)) == ["b", "c", "a"]
    assert names(pick("quota", pairs, 3)) == ["b", "a", "c"]  # occupation 1/1, 4/2, 3/1


def test_an_unknown_policy_is_refused_by_name():
    with pytest.raises(ValueError, match="unknown services-group policy 'fifo'; use one of cron, balanced"):
        pick("fifo", [], 1)


def due(*services, logs=(1,)):
    return TableNeed(log_files=logs, slices=len(logs), work={s: ServiceWork(True, "due") for s in services})


def test_a_tick_remembers_who_waited_and_who_ran_and_an_unreadable_table_waits():
    members = {n: Member(n, f"/t/{n}", {"compaction": {}}) for n in ("a", "b", "c")}
    needs = {"a": due("compaction", logs=(12,)), "b": due("compaction", logs=(6,)), "c": "StorageError: gone"}
    chosen, state = plan_tick(GroupState(), members, needs, policy="need", budget=1)
    assert [x.key for x in chosen] == [("a", "compaction")] and chosen[0].need == 12 / 5
    assert (state.tick, state.waited, state.last_serviced, state.runs) == (1, {"b/compaction": 1}, {"a": 1}, [(1, "a")])
    assert GroupState.from_dict(state.to_dict()) == state  # what the group's DAG passes to its next tick
    # a's compaction ran; b has waited a tick, and now goes first
    chosen, state = plan_tick(state, members, {"a": due("clean"), "b": due("compaction", logs=(6,))},
                              policy="need", budget=1)
    assert [x.key for x in chosen] == [("b", "compaction")] and state.waited == {"a/clean": 1}


def test_need_serves_first_a_table_with_several_due_services_which_needs_as_many_ticks():
    several = [c("busy", 0.6), c("busy", 0.5, service="clean")]  # 1.1 in all, one service a tick
    assert names(pick("need", [*several, c("hot", 0.9)], 1)) == ["busy"]
    assert [x.key for x in pick("need", [*several, c("hot", 0.9)], 2)] == [("busy", "compaction"),
                                                                           ("hot", "compaction")]


def test_a_cron_turn_the_budget_could_not_take_is_kept_until_it_runs_the_longest_waiting_first():
    members = {n: Member(n, f"/t/{n}", {"compaction": {}}) for n in ("a", "b", "c")}
    needs = {n: due("compaction") for n in members}
    fired = {"a", "b", "c"}
    chosen, state = plan_tick(GroupState(), members, needs, policy="cron", budget=1, cron_due=fired.__contains__)
    assert names(chosen) == ["a"] and state.turns == ["b", "c"]
    # no schedule fires now: the kept turns run, one a tick, and a served turn is gone
    chosen, state = plan_tick(state, members, needs, policy="cron", budget=1, cron_due=lambda _: False)
    assert names(chosen) == ["b"] and state.turns == ["c"]
    # a table whose turn came with nothing due has no turn left
    chosen, state = plan_tick(state, members, {"a": due("compaction"), "c": TableNeed()}, policy="cron",
                              budget=1, cron_due=lambda _: False)
    assert chosen == [] and state.turns == []
    assert GroupState.from_dict(state.to_dict()) == state
