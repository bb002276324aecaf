"""What deferred hudi-ops tasks wait on in Airflow's triggerer."""
