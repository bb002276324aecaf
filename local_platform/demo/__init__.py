"""The demo (`make demo`): the RFC-22 scenario through Airflow, on the local platform (local_platform)."""
