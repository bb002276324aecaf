"""What the "Hudi tables" view and the fleet page show of each table of the tables config."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from hudi_ops.airflow.dag_factory.factory import configured_tables
from hudi_ops.airflow.dag_factory.tables_config import TablesConfig


@dataclass(frozen=True)
class TableEntry:
    """What the timeline view needs of a table of the config."""

    name: str
    base_path: str
    zookeeper_conn_id: str | None
    aws_conn_id: str | None  # a table on S3
    clean_conf: Mapping[str, str]  # the options its cleans run with: what the next one removes
    freshness: float | None = None  # its goal, in minutes
    ingests: bool = False  # it has an ingest DAG


def table_entries(config: TablesConfig, *, origin: str = "tables config") -> dict[str, TableEntry]:
    return {name: TableEntry(name, t.config.base_path, t.config.zookeeper_conn_id, t.config.aws_conn_id,
                             t.clean_conf(), t.config.freshness, t.config.ingest is not None)
            for name, t in configured_tables(config, origin).items()}
