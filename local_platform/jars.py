"""The jars of the servers `make up`, the demo and the tests start on this machine, fetched with Maven into
the jar cache beside the jobs' (hudi_ops.jars has those): `python -m local_platform.jars fetch [PART ...]`
(`make jars` fetches all).

Parts: `zookeeper`, ZooKeeper's server (local_platform.zookeeper_server); `kafka-broker`, Apache Kafka's
broker (local_platform.kafka_server); `hadoop`, YARN's ResourceManager and NodeManager, for the tests of
cluster deploy mode (local_platform.yarn_cluster). Each with what it needs at run time.
"""

from __future__ import annotations

import sys

from hudi_ops.jars import Parts, main
from hudi_ops.maven import fetch_with_dependencies
from local_platform import kafka_server, yarn_cluster, zookeeper_server

PARTS: Parts = {
    "zookeeper": (lambda: fetch_with_dependencies(zookeeper_server.SERVER_ARTIFACTS, zookeeper_server.maven_jars_dir()),
                  zookeeper_server.require_zookeeper),
    "kafka-broker": (lambda: fetch_with_dependencies(kafka_server.SERVER_ARTIFACTS, kafka_server.maven_jars_dir()),
                     kafka_server.require_kafka),
    "hadoop": (lambda: fetch_with_dependencies(yarn_cluster.ARTIFACTS, yarn_cluster.hadoop_jars_dir()),
               yarn_cluster.require_hadoop),
}

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:], PARTS, "local_platform.jars", __doc__))
