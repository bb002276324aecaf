"""`HudiCommitSensor` against a real table."""

from __future__ import annotations

import pyarrow as pa

from hudi_ops import HudiTable


def test_the_sensor_waits_for_a_commit_completed_after_the_given_time(tmp_path):
    from hudi_ops.airflow.sensors import HudiCommitSensor

    base = tmp_path / "t"
    sensor = HudiCommitSensor(task_id="wait", base_path=str(base), poke_interval=1)
    assert not sensor.poke({}).is_done  # no table yet
    table = HudiTable.create(base, name="t", record_key="id")
    assert not sensor.poke({}).is_done  # a table without commits
    first = table.upsert(pa.table({"id": [1]}))
    done = sensor.poke({})
    assert done.is_done and done.xcom_value == {"instant": first.instant_time,
                                                "completion_time": first.completion_time, "action": "commit"}

    later = HudiCommitSensor(task_id="wait", base_path=str(base), after=first.completion_time)
    assert not later.poke({}).is_done
    second = table.upsert(pa.table({"id": [2]}))
    assert later.poke({}).xcom_value["instant"] == second.instant_time
