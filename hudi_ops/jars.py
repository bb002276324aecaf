"""Every jar hudi-ops runs with, fetched in one place with Maven into the jar cache (hudi_ops.maven), and
what is built from them: `python -m hudi_ops.jars fetch [PART ...]` (`make jars` fetches all).

Parts, in the order they are fetched:
- `hudi`: Apache Hudi's Spark bundle of the chosen release (hudi_ops.spark.hudi_bundle) and hudi-ops'
  Java classes for it, compiled against it (hudi_ops.spark.hudi_java);
- `s3a`: Hadoop's s3a connector and the AWS SDK it was built with (hudi_ops.spark.s3a);
- `zookeeper`: the ZooKeeper server `make up`, the demo and the tests start (hudi_ops.local);
- `kafka`: Spark's Kafka reader (hudi_ops.spark.kafka_connector) and the Kafka broker the tests start
  (hudi_ops.local.kafka_server);
- `hadoop`: YARN's ResourceManager and NodeManager, for the tests of cluster deploy mode
  (hudi_ops.local.yarn_cluster);
- `class-sharing`: the jobs' class-data-sharing archive, built by running each kind of job once
  (hudi_ops.spark.class_sharing; needs `hudi`).

The modules named above only look their jars up, and each error for a missing jar names the command
here. `python -m hudi_ops.jars` prints each part's jars (`PART: jars`); `python -m hudi_ops.jars PART`
prints that part's alone, as `--jars` takes them.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

from hudi_ops.errors import ConfigError
from hudi_ops.local import kafka_server, yarn_cluster, zookeeper_server
from hudi_ops.maven import fetch_jar, fetch_with_dependencies, jars_dir
from hudi_ops.spark import class_sharing, driver_jvm, hudi_bundle, hudi_java, kafka_connector, s3a


def fetch_hudi() -> Path:
    """The chosen Hudi bundle, with hudi-ops' Java classes for its release built beside it."""
    release = hudi_bundle.hudi_release()
    bundle = fetch_jar(hudi_bundle.hudi_spark_bundle(release), jars_dir())
    hudi_java.build(bundle, release)
    return bundle


def fetch_s3a() -> None:
    for artifact in s3a.ARTIFACTS:
        fetch_jar(artifact, jars_dir())


def fetch_zookeeper() -> None:
    fetch_with_dependencies(zookeeper_server.SERVER_ARTIFACTS, zookeeper_server.maven_jars_dir())


def fetch_kafka() -> None:
    for artifact in kafka_connector.ARTIFACTS:
        fetch_jar(artifact, jars_dir())
    fetch_with_dependencies(kafka_server.SERVER_ARTIFACTS, kafka_server.maven_jars_dir())


def fetch_hadoop() -> None:
    fetch_with_dependencies(yarn_cluster.ARTIFACTS, yarn_cluster.hadoop_jars_dir())


#: part -> (fetch or build it, its jars as text)
PARTS: dict[str, tuple[Callable[[], object], Callable[[], str]]] = {
    "hudi": (fetch_hudi, lambda: ",".join(hudi_bundle.hudi_jars())),
    "s3a": (fetch_s3a, lambda: ",".join(s3a.s3a_jars())),
    "zookeeper": (fetch_zookeeper, zookeeper_server.require_zookeeper),
    "kafka": (fetch_kafka, lambda: ",".join(kafka_connector.kafka_jars())),
    "hadoop": (fetch_hadoop, yarn_cluster.require_hadoop),
    "class-sharing": (class_sharing.build, lambda: str(driver_jvm.archive_path())),
}


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m hudi_ops.jars [fetch]", description=__doc__.split("\n")[0])
    parser.add_argument("parts", nargs="*", metavar="PART", help=f"some of: {', '.join(PARTS)} (default: all)")
    fetching = argv[:1] == ["fetch"]
    parts = parser.parse_args(argv[1:] if fetching else argv).parts
    unknown = [p for p in parts if p not in PARTS]
    if unknown:
        parser.error(f"unknown part(s) {', '.join(unknown)}; use some of {', '.join(PARTS)}")
    chosen = [p for p in PARTS if p in parts] if parts else list(PARTS)  # in their order: class-sharing last
    try:
        for part in chosen:
            fetch, jars = PARTS[part]
            if fetching:
                fetch()
            print(jars() if len(chosen) == 1 else f"{part}: {jars()}")
        return 0
    except ConfigError as e:
        print(f"hudi_ops.jars: error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
