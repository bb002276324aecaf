"""hudi-ops' own Java classes for Hudi, built from source into the jar cache beside Hudi's bundle.

- `fence/FencedZookeeperLockProvider.java`: Hudi's ZooKeeper lock, which also checks a job's batch
  fence each time Hudi takes it, so that a write whose fence was lost never commits
  (hudi_ops.spark.jobs.batch_fence). Built for every release.
- `write/DatasourceWrite.java`: Hudi's Spark datasource write that also commits keys of hudi-ops' own
  choosing in the commit's extra metadata (HoodieStreamer's checkpoint keys, which the datasource's one
  prefix cannot select beside hudi-ops' `_hudi_ops.*` keys). Built for every release.
- `validate/`: Hudi's three SQL pre-commit validators, whose refusal carries the validator and its
  query up to the job (Hudi's own runner reports only that one of them failed). Built for every release.
- `backport/PreferWriterConflictResolutionStrategy.java`: a fix Hudi 1.2.0 made that 1.1.1 lacks (its
  prefer-writer check fails a clustering's commit whenever a write in flight is among the writes it
  checks: it sorts them by a completion time those in flight do not have), so that beside a steady
  ingest a clustering can commit; 1.2.0 cannot be the default (docs/versions.md). Built only for the
  releases that lack it.

They are compiled with `javac` against the bundle when the bundle is fetched, and shipped beside it;
a job whose options name a Hudi class that one of them replaces runs hudi-ops' class when Hudi can
load it.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hudi_ops.errors import ConfigError
from hudi_ops.options.occ import PREFER_WRITER, ZOOKEEPER_LOCK_PROVIDER

SOURCES = Path(__file__).parent / "java"
#: the Hudi releases that lack the backported fix
BACKPORTED_RELEASES = ("1.1.1",)


@dataclass(frozen=True)
class JavaClass:
    name: str  # hudi-ops' class
    folder: str  # its sources' folder under SOURCES
    releases: tuple[str, ...] | None  # the Hudi releases it is built for; None: every release
    missing: str  # what a job runs without when Hudi cannot load it


#: Hudi's class -> hudi-ops' class that replaces it
CLASSES = {
    ZOOKEEPER_LOCK_PROVIDER: JavaClass("hudiops.fence.FencedZookeeperLockProvider", "fence", None,
                                       "its batch fence is not checked when the write commits"),
    PREFER_WRITER: JavaClass("hudiops.backport.PreferWriterConflictResolutionStrategy", "backport",
                             BACKPORTED_RELEASES, "hudi-ops' fix of Hudi's prefer-writer check"),
}
#: Hudi's SQL pre-commit validators, whose refusals name the validator and the query
VALIDATORS = tuple(f"SqlQuery{kind}PreCommitValidator" for kind in ("SingleResult", "Equality", "Inequality"))
CLASSES.update({f"org.apache.hudi.client.validator.{name}": JavaClass(
    f"hudiops.validate.{name}", "validate", None, "a refused commit does not say which query refused it")
    for name in VALIDATORS})
#: hudi-ops' classes that replace none of Hudi's
DATASOURCE_WRITE = JavaClass("hudiops.write.DatasourceWrite", "write", None,
                             "HoodieStreamer's checkpoint keys are not written into the commit")
_JAR_PREFIX = "hudi-ops-java-for-hudi-"
#: Hudi 1.1.1 runs on Java 8 and later
_JAVAC_OPTIONS = ("--release", "8", "-Xlint:-options")


def hudi_ops_jar(folder: Path, release: str) -> Path:
    """Named by a digest of the sources and the compiler's options, so a jar built otherwise is never
    taken for theirs (older jars stay: another hudi-ops sharing the cache may need them)."""
    digest = hashlib.sha256(" ".join(_JAVAC_OPTIONS).encode())
    for path in _sources(release):
        digest.update(path.relative_to(SOURCES).as_posix().encode() + b"\0" + path.read_bytes())
    return folder / f"{_JAR_PREFIX}{release}-{digest.hexdigest()[:12]}.jar"


def _sources(release: str) -> list[Path]:
    folders = {c.folder for c in (*CLASSES.values(), DATASOURCE_WRITE) if c.releases is None or release in c.releases}
    return sorted(p for folder in sorted(folders) for p in (SOURCES / folder).glob("*.java"))


def build(bundle: Path, release: str) -> Path:
    """hudi-ops' classes for `release`, compiled against its `bundle`, as a jar beside it (built once)."""
    target = hudi_ops_jar(bundle.parent, release)
    if target.is_file():
        return target
    javac = shutil.which("javac")
    if javac is None:
        raise ConfigError(f"building hudi-ops' Java classes for Hudi {release} needs a JDK's `javac` on PATH: "
                          "install one (Debian: `apt-get install default-jdk-headless`)")
    # built next to the target and renamed into place: a build cut off leaves no jar, and is done again
    with tempfile.TemporaryDirectory(prefix=".hudi-ops-java-", dir=bundle.parent) as work:
        classes = Path(work) / "classes"
        classpath = os.pathsep.join([str(bundle), str(_spark_jars() / "*")])  # Spark's, for slf4j
        command = [javac, *_JAVAC_OPTIONS, "-cp", classpath, "-d", str(classes), *map(str, _sources(release))]
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise ConfigError(f"compiling hudi-ops' Java classes for Hudi {release} against {bundle.name} failed: "
                              f"{done.stderr.strip()[:2000]}")
        partial = Path(work) / target.name
        with zipfile.ZipFile(partial, "w", zipfile.ZIP_DEFLATED) as jar:
            jar.writestr("META-INF/MANIFEST.MF", "Manifest-Version: 1.0\r\n\r\n")
            for path in sorted(classes.rglob("*.class")):
                jar.write(path, path.relative_to(classes).as_posix())
        os.replace(partial, target)
    return target


def _spark_jars() -> Path:
    """The jars of the Spark that pip installed (pyspark), which Hudi's bundle runs on."""
    import pyspark

    return Path(pyspark.__file__).parent / "jars"


def with_hudi_ops_classes(spark: Any, options: Mapping[str, str]) -> dict[str, str]:
    """`options`, with each Hudi class they name that hudi-ops replaces swapped for hudi-ops' class when
    Hudi can load it (a Hudi of the user's own, or a release with the fix, runs its own class)."""
    chosen = dict(options)
    for key, value in options.items():
        names = [n.strip() for n in str(value).split(",")]  # a list of classes (the validators) or one
        if not any(n in CLASSES for n in names):
            continue
        chosen[key] = ",".join(_ours(spark, n) for n in names)
    return chosen


def _ours(spark: Any, name: str) -> str:
    ours = CLASSES.get(name)
    if ours is None:
        return name
    if hudi_loads(spark, ours.name):
        return ours.name
    if ours.releases is None or _hudi_version(spark) in ours.releases:
        print(f"hudi_ops.spark: warning: Hudi {_hudi_version(spark)} runs {name} without hudi-ops' "
              f"{ours.name}, so {ours.missing}: pass every jar `python -m hudi_ops.jars hudi` "
              "prints", file=sys.stderr, flush=True)
    return name


def hudi_loads(spark: Any, name: str) -> bool:
    """Whether Hudi's own class lookup (the one that loads the options' classes) finds `name`."""
    from py4j.protocol import Py4JJavaError

    try:
        spark.sparkContext._jvm.org.apache.hudi.common.util.ReflectionUtils.getClass(name)
    except Py4JJavaError:
        return False
    return True


def _hudi_version(spark: Any) -> str | None:
    package = spark.sparkContext._jvm.org.apache.hudi.DefaultSource._java_lang_class.getPackage()
    return package.getImplementationVersion() if package is not None else None
