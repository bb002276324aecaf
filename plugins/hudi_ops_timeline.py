"""Airflow plugin: the "Hudi tables" view (timeline chart, file groups, latest commits) in Airflow's UI.

Airflow loads it from its plugins folder; the view itself lives in `hudi_ops.airflow.timeline_view`.
"""

from __future__ import annotations

from airflow.plugins_manager import AirflowPlugin

from hudi_ops.airflow.timeline_view import plugin_entries

_ENTRIES = plugin_entries()


class HudiOpsTimelinePlugin(AirflowPlugin):
    name = "hudi_ops_timeline"
    fastapi_apps = _ENTRIES["fastapi_apps"]
    external_views = _ENTRIES["external_views"]
