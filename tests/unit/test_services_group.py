"""A services group's tick as its DAG's plan task runs it: the state it keeps, a table's own schedule, and
the mode of a service it picks (the group's DAG runs under a real scheduler in
tests/airflow/test_local_airflow.py)."""

from __future__ import annotations

import datetime as dt

import pytest

from hudi_ops.airflow.dag_factory.services_group import _mode, cron_fired, kept_state
from hudi_ops.fleet.scheduler import GroupState, service_need
from hudi_ops.read.service_work import ServiceWork
from hudi_ops.read.table_need import TableNeed


def due(*services, logs=(1,)):
    return TableNeed(log_files=logs, slices=len(logs), work={s: ServiceWork(True, "due") for s in services})


def test_a_tables_own_schedule_fired_when_its_cron_came_since_the_last_tick():
    last = dt.datetime(2026, 11, 27, 12, 0, tzinfo=dt.UTC).timestamp()
    assert cron_fired("0 * * * *", last + 60, last + 3600)  # 13:00 came
    assert not cron_fired("0 * * * *", last + 60, last + 3599)
    assert cron_fired(None, last, last) and cron_fired("0 * * * *", 0, last)  # no schedule; the first tick


@pytest.mark.parametrize("raw", ['{"tick": "x"}', "not json", "[1, 2]", '{"waited": 3}'])
def test_a_group_state_no_tick_wrote_is_logged_and_the_group_starts_afresh(raw, caplog):
    assert kept_state("fleet", raw) == GroupState()
    assert "the Variable hudi_ops.services_group.fleet is not a state this group wrote" in caplog.text
    assert kept_state("fleet", None) == GroupState()
    assert kept_state("fleet", '{"tick": 4, "turns": ["a"]}') == GroupState(tick=4, turns=["a"])


def test_a_pending_plan_is_executed_before_anything_new_is_planned():
    pending = TableNeed(work={"compaction": ServiceWork(True, "plan pending")}, executes=frozenset({"compaction"}))
    assert _mode(pending, "compaction") == "execute"
    assert _mode(due("compaction", "clean"), "compaction") == "scheduleAndExecute"
    assert _mode(pending, "clean") == "scheduleAndExecute" and _mode("StorageError", "compaction") == \
        "scheduleAndExecute"
    assert service_need(pending, "compaction") == 1.0  # a waiting plan counts as at the goal at least
    assert service_need(due("compaction", logs=(2,)), "compaction") == 2 / 5
