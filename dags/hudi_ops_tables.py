"""hudi-ops' DAGs: each table's ingest, backfill, services and restore DAGs (hudi_ops.airflow.dag_factory.dag_files)."""
from hudi_ops.airflow.dag_factory.dag_files import tables_dags

globals().update(tables_dags(__file__))
