"""The hudi-ops DAGs: per table of the tables config its ingest, backfill, services and restore DAGs.

The config is `$HUDI_OPS_TABLES_CONFIG`, else `tables.yaml` next to this file. A table the config refuses
gets no DAGs, and hudi_ops_tables_refused.py's import error names it; the other tables' DAGs load.
"""

from __future__ import annotations

from pathlib import Path

from hudi_ops.airflow.dag_factory import dags_from_file, tables_config_path

globals().update(dags_from_file(tables_config_path(Path(__file__).parent)))
