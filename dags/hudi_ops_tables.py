"""The hudi-ops DAGs: one ingest and one backfill DAG per table of the tables config.

The config is `$HUDI_OPS_TABLES_CONFIG`, else `tables.yaml` next to this file.
"""

from __future__ import annotations

import os
from pathlib import Path

from hudi_ops.airflow.dag_factory import dags_from_file

_CONFIG = os.environ.get("HUDI_OPS_TABLES_CONFIG") or Path(__file__).with_name("tables.yaml")

globals().update(dags_from_file(_CONFIG))
