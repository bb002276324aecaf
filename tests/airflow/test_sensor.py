"""`HudiCommitSensor` on copies of real Spark-written tables (the hudi-rs fixtures).

A commit "completes" in these tests the way it does on storage: its completed instant file appears. The tests
take a table's completed instant files away (the commits are then still in flight) and put them back.
"""

from __future__ import annotations

from pathlib import Path

from tests.shared_data import unzip_fixture

V8_COW = "sample_table/cow/v8_nonpartitioned"  # two commits, timeline layout 2
V9_ROLLBACK = "sample_table/mor/avro/v9_nonpartitioned_rollback"  # deltacommits, one of them rolled back
# completed instant files as Spark wrote them: <requested>_<completed>.<action>
V8_FIRST, V8_SECOND = "20250713010535797_20250713010536200.commit", "20250713010536861_20250713010537206.commit"


def sensor(base: Path, after: str | None = None):
    from hudi_ops.airflow.sensors.commit import HudiCommitSensor

    return HudiCommitSensor(task_id="wait", base_path=str(base), after=after, poke_interval=1)


def xcom(completed_file: str) -> dict[str, str]:
    times, action = completed_file.split(".")
    requested, completed = times.split("_")
    return {"instant": requested, "completion_time": completed, "action": action}


def test_the_sensor_waits_for_a_commit_completed_after_the_given_time(tmp_path):
    base = tmp_path / Path(V8_COW).name
    waiting = sensor(base)
    assert not waiting.poke({}).is_done  # no table yet

    unzip_fixture(f"{V8_COW}.zip", tmp_path)
    timeline = base / ".hoodie" / "timeline"
    aside = tmp_path / "aside"
    aside.mkdir()
    for name in (V8_FIRST, V8_SECOND):
        (timeline / name).rename(aside / name)
    assert not waiting.poke({}).is_done  # both commits requested and in flight, none completed

    (aside / V8_FIRST).rename(timeline / V8_FIRST)
    done = waiting.poke({})
    assert done.is_done and done.xcom_value == xcom(V8_FIRST)

    later = sensor(base, after=xcom(V8_FIRST)["completion_time"])
    assert not later.poke({}).is_done  # completed at that time is not after it
    (aside / V8_SECOND).rename(timeline / V8_SECOND)
    done = later.poke({})
    assert done.is_done and done.xcom_value == xcom(V8_SECOND)
    assert waiting.poke({}).xcom_value == xcom(V8_SECOND)  # the newest commit is named
    assert not sensor(base, after=xcom(V8_SECOND)["completion_time"]).poke({}).is_done


def test_after_compares_completion_times(tmp_path):
    """A commit requested before `after` but completed after it still counts (RFC-22's completion order)."""
    base = unzip_fixture(f"{V8_COW}.zip", tmp_path)
    first = xcom(V8_FIRST)
    between = str(int(first["instant"]) + 1)  # after the request, before the completion
    assert sensor(base, after=between).poke({}).xcom_value == xcom(V8_SECOND)
    (base / ".hoodie" / "timeline" / V8_SECOND).unlink()
    assert sensor(base, after=between).poke({}).xcom_value == first


def test_merge_on_read_deltacommits_and_rollbacks(tmp_path):
    base = unzip_fixture(f"{V9_ROLLBACK}.zip", tmp_path)
    timeline = base / ".hoodie" / "timeline"
    first = "20260403184238571_20260403184241921.deltacommit"
    rollback = "20260403184259077_20260403184300219.rollback"
    newest = "20260403184302162_20260403184303142.deltacommit"
    assert sensor(base).poke({}).xcom_value == xcom(newest)
    assert not sensor(base, after=xcom(newest)["completion_time"]).poke({}).is_done
    (timeline / newest).unlink()
    assert sensor(base).poke({}).xcom_value == xcom(first)
    # a rollback completed after the first write, and the write it rolled back never completed: neither counts
    assert (timeline / rollback).exists() and xcom(rollback)["completion_time"] > xcom(first)["completion_time"]
    assert not sensor(base, after=xcom(first)["completion_time"]).poke({}).is_done
