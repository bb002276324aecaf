"""The tables hudi_ops_tables.py gives no DAGs, as this file's import error (hudi_ops.airflow.dag_factory.dag_files)."""
from hudi_ops.airflow.dag_factory.dag_files import raise_refused_tables

raise_refused_tables(__file__)
