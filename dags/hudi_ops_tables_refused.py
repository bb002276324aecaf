"""The tables of the tables config that hudi_ops_tables.py gives no DAGs, as this file's import error.

Airflow shows a DAG file's import error in its UI and in `airflow dags list-import-errors`, and marks every
DAG of that file as broken (stale, not scheduled, not triggerable). So a refused table's error is raised
here, in a file with no DAGs, while hudi_ops_tables.py loads the DAGs of every other table.
"""

from __future__ import annotations

from pathlib import Path

from hudi_ops.airflow.dag_factory import tables_config_path
from hudi_ops.airflow.tables_config import read_tables_config
from hudi_ops.errors import ConfigError

try:
    config = read_tables_config(tables_config_path(Path(__file__).parent))
except ConfigError:
    config = None  # no config at all: hudi_ops_tables.py's import error says why, once
if config is not None:
    config.raise_refused()
