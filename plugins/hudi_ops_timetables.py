"""Airflow plugin: the timetable of the backfill DAGs (`hudi_ops.airflow.backfill_timetable`), which Airflow's
dag-processor, scheduler and api-server read those DAGs with (a custom timetable must come from a plugin).
"""

from __future__ import annotations

from typing import ClassVar

from airflow.plugins_manager import AirflowPlugin

from hudi_ops.airflow.backfill_timetable import DailyBackfillTimetable


class HudiOpsTimetablesPlugin(AirflowPlugin):
    name = "hudi_ops_timetables"
    timetables: ClassVar[list[type]] = [DailyBackfillTimetable]
