"""The demos (`make demo`, `make tour`) and the local ZooKeeper and Airflow they run, which the tests share."""
