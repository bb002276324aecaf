"""The backfill DAG's timetable: a run per day for Airflow's own backfills, and no run of its own.

`airflow backfill create --from-date --to-date` and the UI's Backfill dialog need a periodic timetable
(Airflow refuses backfills of a DAG with `schedule=None`); its data intervals are days, midnight to
midnight UTC, so each backfill run writes its day's `dt=` folder. The scheduler must never start such a
run by itself, and Airflow 3.3 offers no switch for that: a DAG with a schedule must allow SCHEDULED runs.
So this timetable answers the scheduler's question, the next run of a DAG with no end date, with none,
and a bounded window (a backfill's) with its days. Airflow reads a custom timetable only through a
plugin: hudi_ops.airflow.ui.plugin registers it.
"""

from __future__ import annotations

from typing import Any

from airflow.timetables.base import DagRunInfo, TimeRestriction
from airflow.timetables.interval import CronDataIntervalTimetable

DAILY = "0 0 * * *"


class DailyBackfillTimetable(CronDataIntervalTimetable):
    """Days [d 00:00, d+1 00:00) UTC inside a bounded window; nothing for the scheduler."""

    # Airflow's own flag for a timetable that schedules nothing (as schedule=None's): with it the DAG may
    # leave SCHEDULED out of its allowed_run_types
    can_be_scheduled = False

    def __init__(self) -> None:
        super().__init__(DAILY, timezone="UTC")
        self.description = "A run per day, midnight to midnight UTC, for Airflow backfills only"

    @property
    def summary(self) -> str:
        return "daily, backfills only"

    def next_dagrun_info_v2(self, *, last_dagrun_info: DagRunInfo | None,
                            restriction: TimeRestriction) -> DagRunInfo | None:
        if restriction.latest is None:  # the scheduler's question (the DAG has no end date): no run of its own
            return None
        return super().next_dagrun_info_v2(last_dagrun_info=last_dagrun_info, restriction=restriction)

    def serialize(self) -> dict[str, Any]:
        return {}

    @classmethod
    def deserialize(cls, data: dict[str, Any]) -> DailyBackfillTimetable:
        return cls()
