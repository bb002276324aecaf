"""Fixes of a later Hudi release that the release hudi-ops runs lacks, built from source into the jar cache.

Hudi 1.1.1's prefer-writer conflict resolution fails a clustering's commit whenever a write in flight
is among the writes it checks (it sorts them by a completion time those in flight do not have: a
NullPointerException), so beside a steady ingest a clustering could never commit. Hudi 1.2.0 fixed
it, but 1.2.0 cannot be the default (docs/versions.md).
`backport/PreferWriterConflictResolutionStrategy.java` is that fix, compiled with `javac` against the
1.1.1 bundle when the bundle is fetched and shipped beside it; a job whose options name Hudi's
prefer-writer class runs the backport when Hudi can load it.
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
from pathlib import Path
from typing import Any

from hudi_ops.errors import ConfigError
from hudi_ops.locks.occ_options import PREFER_WRITER

SOURCES = Path(__file__).parent / "backport"
#: Hudi's class -> the backport that replaces it
CLASSES = {PREFER_WRITER: "hudiops.backport.PreferWriterConflictResolutionStrategy"}
#: the Hudi releases that lack the fixes
BACKPORTED_RELEASES = ("1.1.1",)
_JAR_PREFIX = "hudi-ops-backports-for-hudi-"
#: Hudi 1.1.1 runs on Java 8 and later
_JAVAC_OPTIONS = ("--release", "8", "-Xlint:-options")


def backport_jar(folder: Path, release: str) -> Path:
    """Named by a digest of the sources and the compiler's options, so a jar built otherwise is never
    taken for theirs (older jars stay: another hudi-ops sharing the cache may need them)."""
    digest = hashlib.sha256(" ".join(_JAVAC_OPTIONS).encode())
    for path in _sources():
        digest.update(path.name.encode() + b"\0" + path.read_bytes())
    return folder / f"{_JAR_PREFIX}{release}-{digest.hexdigest()[:12]}.jar"


def _sources() -> list[Path]:
    return sorted(SOURCES.glob("*.java"))


def build(bundle: Path, release: str) -> Path:
    """The backports for `release`, compiled against its `bundle`, as a jar beside it (built once)."""
    target = backport_jar(bundle.parent, release)
    if target.is_file():
        return target
    javac = shutil.which("javac")
    if javac is None:
        raise ConfigError(f"building hudi-ops' fixes for Hudi {release} needs a JDK's `javac` on PATH: install one "
                          "(Debian: `apt-get install default-jdk-headless`)")
    # built next to the target and renamed into place: a build cut off leaves no jar, and is done again
    with tempfile.TemporaryDirectory(prefix=".hudi-ops-backports-", dir=bundle.parent) as work:
        classes = Path(work) / "classes"
        classpath = os.pathsep.join([str(bundle), str(_spark_jars() / "*")])  # Spark's, for slf4j
        command = [javac, *_JAVAC_OPTIONS, "-cp", classpath, "-d", str(classes), *map(str, _sources())]
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise ConfigError(f"compiling hudi-ops' fixes for Hudi {release} against {bundle.name} failed: "
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


def with_backports(spark: Any, options: Mapping[str, str]) -> dict[str, str]:
    """`options`, with each Hudi class they name that a backport replaces swapped for the backport when
    Hudi can load it (a Hudi of the user's own, or a release with the fix, runs its own class)."""
    chosen = dict(options)
    for key, value in options.items():
        backport = CLASSES.get(str(value).strip())
        if backport is None:
            continue
        if _hudi_loads(spark, backport):
            chosen[key] = backport
        elif (version := _hudi_version(spark)) in BACKPORTED_RELEASES:
            print(f"hudi_ops.spark: warning: Hudi {version} runs without hudi-ops' fix of {value} "
                  f"({backport} is not on the classpath): pass every jar `python -m hudi_ops.spark.hudi_bundle` "
                  "prints", file=sys.stderr, flush=True)
    return chosen


def _hudi_loads(spark: Any, name: str) -> bool:
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
