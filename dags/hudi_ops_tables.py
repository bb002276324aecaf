"""The hudi-ops DAGs: one ingest and one backfill DAG per table of the tables config.

The config is `$HUDI_OPS_TABLES_CONFIG`, else `tables.yaml` next to this file.
"""

from __future__ import annotations

from pathlib import Path

from hudi_ops.airflow.dag_factory import dags_from_file, tables_config_path

globals().update(dags_from_file(tables_config_path(Path(__file__).parent)))
