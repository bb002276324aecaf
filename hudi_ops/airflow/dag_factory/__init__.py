"""DAGs from a tables config: the config's model (`tables_config`), the DAGs of each table and services group
(`factory`, `services_group`), what a deployment's DAG files call (`dag_files`), a table's freshness goal and
its Kafka topic's watcher. Built on the provider's operators; the UI reads the config through it."""
