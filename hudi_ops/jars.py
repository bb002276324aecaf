"""Every jar hudi-ops' jobs run with, fetched in one place with Maven into the jar cache (hudi_ops.maven), and
what is built from them: `python -m hudi_ops.jars fetch [PART ...]` (`make jars` fetches all).

Parts, in the order they are fetched:
- `hudi`: Apache Hudi's Spark bundle of the chosen release (hudi_ops.spark.hudi_bundle) and hudi-ops'
  Java classes for it, compiled against it (hudi_ops.spark.hudi_java);
- `s3a`: Hadoop's s3a connector and the AWS SDK it was built with (hudi_ops.spark.s3a);
- `kafka`: Spark's Kafka reader and its Avro functions (hudi_ops.spark.kafka_connector);
- `class-sharing`: the jobs' class-data-sharing archive, built by running each kind of job once
  (hudi_ops.spark.class_sharing; needs `hudi`).

The modules named above only look their jars up, and each error for a missing jar names the command
here. `python -m hudi_ops.jars` prints each part's jars (`PART: jars`); `python -m hudi_ops.jars PART`
prints that part's alone, as `--jars` takes them. The servers `make up`, the demo and the tests start
(ZooKeeper, a Kafka broker, YARN) are the development side's: `python -m local_platform.jars`.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

from hudi_ops.errors import ConfigError
from hudi_ops.maven import fetch_jar, jars_dir
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


def fetch_kafka() -> None:
    for artifact in kafka_connector.ARTIFACTS:
        fetch_jar(artifact, jars_dir())


#: what a part is: fetch or build it, and its jars as text
Parts = dict[str, tuple[Callable[[], object], Callable[[], str]]]
#: part -> what it is
PARTS: Parts = {
    "hudi": (fetch_hudi, lambda: ",".join(hudi_bundle.hudi_jars())),
    "s3a": (fetch_s3a, lambda: ",".join(s3a.s3a_jars())),
    "kafka": (fetch_kafka, lambda: ",".join(kafka_connector.kafka_jars())),
    "class-sharing": (class_sharing.build, lambda: str(driver_jvm.archive_path())),
}


def main(argv: list[str], parts_known: Parts = PARTS, module: str = "hudi_ops.jars", about: str = __doc__) -> int:
    """`[fetch] [PART ...]` of `parts_known`, as `python -m MODULE` runs it."""
    parser = argparse.ArgumentParser(prog=f"python -m {module} [fetch]", description=about.split("\n")[0])
    parser.add_argument("parts", nargs="*", metavar="PART", help=f"some of: {', '.join(parts_known)} (default: all)")
    fetching = argv[:1] == ["fetch"]
    parts = parser.parse_args(argv[1:] if fetching else argv).parts
    unknown = [p for p in parts if p not in parts_known]
    if unknown:
        parser.error(f"unknown part(s) {', '.join(unknown)}; use some of {', '.join(parts_known)}")
    chosen = [p for p in parts_known if p in parts] if parts else list(parts_known)  # in order: class-sharing last
    try:
        for part in chosen:
            fetch, jars = parts_known[part]
            if fetching:
                fetch()
            print(jars() if len(chosen) == 1 else f"{part}: {jars()}")
        return 0
    except ConfigError as e:
        print(f"{module}: error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
