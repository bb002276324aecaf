"""The demo (`make demo`: the RFC-22 scenario through Airflow) and the local ZooKeeper and Airflow it runs,
which the tests share."""
