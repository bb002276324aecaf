"""hudi-ops in Airflow's UI: the plugin, the "Hudi tables" view (each table's timeline chart, commits, file
groups and lock line) and the fleet page."""
