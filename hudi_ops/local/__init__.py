"""What `make up`, the demo and the tests start on this machine, on loopback: ZooKeeper, a local S3 server,
Airflow, YARN's daemons, and `make up`'s platform of them. The operators' package never imports it."""
