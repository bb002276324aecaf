"""The development side: what `make up`, the demo and the tests start on this machine, on loopback
(ZooKeeper, a Kafka broker, a Hive Metastore, a local S3 server, Prometheus, Airflow, YARN's daemons, and
`make up`'s platform of them) and the jars of those servers (`python -m local_platform.jars`). Not part of
hudi-ops' wheel nor of the zip cluster mode ships; it imports hudi_ops, never the other way round."""
