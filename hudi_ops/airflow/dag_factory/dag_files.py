"""What a deployment's DAG files call, so that each is one line (README, "Installing into your Airflow").

`tables_dags(__file__)` in one file gives the DAGs of every table the tables config accepts;
`raise_refused_tables(__file__)` in another makes the refused tables that file's import error, which
Airflow shows in its UI while the first file's DAGs load (an import error would mark every DAG of its
file broken). The tables config is `$HUDI_OPS_TABLES_CONFIG`, else `tables.yaml` beside the files.

A large fleet's DAGs can come from several files in place of the first, `tables_dags(__file__, shard=i,
shards=n)` in the i-th of n: Airflow's DAG processor parses them in parallel, each a share of the
tables (docs/fleet-layout.md).
"""

from __future__ import annotations

from pathlib import Path

from airflow.sdk import DAG

from hudi_ops.airflow.dag_factory.factory import Shard, dags_from_file
from hudi_ops.airflow.dag_factory.tables_config import read_tables_config, tables_config_path
from hudi_ops.errors import ConfigError


def tables_dags(dag_file: str, *, shard: int = 0, shards: int = 1) -> dict[str, DAG]:
    """The DAGs of the tables the config accepts, of those in shard `shard` of `shards` (each table's DAGs
    always in the same one: hudi_ops.airflow.dag_factory.factory.Shard)."""
    return dags_from_file(tables_config_path(Path(dag_file).parent), shard=Shard(shard, shards))


def raise_refused_tables(dag_file: str) -> None:
    try:
        config = read_tables_config(tables_config_path(Path(dag_file).parent))
    except ConfigError:
        return  # no config at all: the DAGs' file's import error says why, once
    config.raise_refused()
