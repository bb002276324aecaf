"""The connections hudi-ops' tasks read: the ZooKeeper lock's (its own connection type), S3's (the Amazon
provider's `aws`), the Hive Metastore's, Kafka's, and Airflow's own REST API."""
