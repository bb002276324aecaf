"""hudi-ops' Airflow plugin, registered by the package's `airflow.plugins` entry point (nothing to copy into
a plugins folder): the "Hudi tables" view in Airflow's UI (hudi_ops.airflow.ui.timeline_view) and the
backfill DAGs' timetable (hudi_ops.airflow.timetables.daily_backfill), which Airflow's dag-processor, scheduler
and api-server read those DAGs with (a custom timetable must come from a plugin).
"""

from __future__ import annotations

from typing import ClassVar

from airflow.plugins_manager import AirflowPlugin

from hudi_ops.airflow.timetables.daily_backfill import DailyBackfillTimetable
from hudi_ops.airflow.ui.timeline_view import plugin_entries

_ENTRIES = plugin_entries()


class HudiOpsPlugin(AirflowPlugin):
    name = "hudi_ops"
    fastapi_apps = _ENTRIES["fastapi_apps"]
    external_views = _ENTRIES["external_views"]
    timetables: ClassVar[list[type]] = [DailyBackfillTimetable]
