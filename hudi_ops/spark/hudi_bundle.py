"""Apache Hudi's Spark bundle: which one hudi-ops runs and where its jars are (hudi_ops.jars fetches them).

Every SparkSession, spark-submit, test and the docker image takes its jars from `hudi_jars()`:
`$HUDI_OPS_HUDI_JARS` (comma-separated jars, e.g. a cluster's own Hudi) when set, else the bundle of
the release `$HUDI_OPS_HUDI_VERSION` names (default `DEFAULT_RELEASE`) in the jar cache
(`$HUDI_OPS_JARS_DIR`, by default `.cache/jars` in a source checkout and `~/.cache/hudi-ops/jars`
otherwise), which `python -m hudi_ops.jars fetch hudi` fills with Maven, so every run after the first
is offline. hudi-ops' own Java classes for the release sit beside its bundle (hudi_ops.spark.hudi_java),
built by the same command; `python -m hudi_ops.jars hudi` prints the jars.
"""

from __future__ import annotations

import os
from pathlib import Path

from hudi_ops.errors import ConfigError
from hudi_ops.maven import MavenArtifact, jars_dir
from hudi_ops.spark import hudi_java

#: The Spark line of the bundle; pyspark in pyproject.toml is pinned to a release of it.
SPARK_LINE = "3.5"
#: Hudi releases whose Spark 3.5 bundle Maven serves here and that write table version 9.
RELEASES = ("1.1.1", "1.2.0")
#: The newest release that passes the soak (tests/integration/test_soak.py) with the metadata table on.
#: 1.2.0 fails every metadata-table append in a JVM whose first act on the metadata table is its
#: compaction (due every 10 commits): `ArrayIndexOutOfBoundsException` in
#: `HoodieMetadataPayload.getInsertValue`, whose fast path compares schemas by identity while 1.2.0's
#: write handles intern them in a second cache (apache/hudi#19559; docs/versions.md).
DEFAULT_RELEASE = "1.1.1"

JARS_ENV = "HUDI_OPS_HUDI_JARS"
VERSION_ENV = "HUDI_OPS_HUDI_VERSION"


def hudi_release() -> str:
    """The Hudi release chosen by `$HUDI_OPS_HUDI_VERSION`, or the default."""
    chosen = os.environ.get(VERSION_ENV, "").strip() or DEFAULT_RELEASE
    if chosen not in RELEASES:
        raise ConfigError(f"{VERSION_ENV}={chosen} is not a Hudi release hudi-ops runs; use one of "
                          f"{', '.join(RELEASES)}, or set {JARS_ENV} to the jars of another Hudi")
    return chosen


def hudi_spark_bundle(release: str | None = None) -> MavenArtifact:
    """Hudi's Spark bundle of `release` (default: the chosen one)."""
    return MavenArtifact("org.apache.hudi", f"hudi-spark{SPARK_LINE}-bundle_2.12", release or hudi_release())


def hudi_jars() -> tuple[str, ...]:
    """The jars that put Apache Hudi on Spark's classpath, as absolute paths."""
    chosen = os.environ.get(JARS_ENV, "").strip()
    if chosen:
        jars = tuple(str(Path(j.strip()).resolve()) for j in chosen.split(",") if j.strip())
        missing = [j for j in jars if not Path(j).is_file()]
        if missing:
            raise ConfigError(f"{JARS_ENV} names jars that do not exist: {', '.join(missing)}; "
                              "point it at the cluster's Hudi Spark bundle, or unset it to use hudi-ops' own")
        return jars
    release = hudi_release()
    artifact = hudi_spark_bundle(release)
    bundle = jars_dir() / artifact.jar_name
    if not bundle.is_file():
        raise ConfigError(f"Hudi's Spark bundle {artifact.coordinates} is not in {bundle.parent}; fetch it "
                          "with `python -m hudi_ops.jars fetch hudi` (make does), or set "
                          f"{JARS_ENV} to the jars of a Hudi you already have")
    ours = hudi_java.hudi_ops_jar(bundle.parent, release)
    if not ours.is_file():
        raise ConfigError(f"hudi-ops' Java classes for Hudi {release} are not built in {bundle.parent}; build "
                          "them with `python -m hudi_ops.jars fetch hudi` (make does)")
    return (str(bundle.resolve()), str(ours.resolve()))
