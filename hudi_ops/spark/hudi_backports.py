"""Fixes of a later Hudi release that the release hudi-ops runs lacks, built from source into the jar cache.

Hudi 1.1.1's prefer-writer conflict resolution fails a clustering's commit whenever a write in flight
is among the writes it checks (it sorts them by a completion time those in flight do not have: a
NullPointerException), so beside a steady ingest a clustering could never commit. Hudi 1.2.0 fixed
it, but 1.2.0 cannot be the default (docs/versions.md).
`backport/PreferWriterConflictResolutionStrategy.java` is that fix, compiled with `javac` against the
1.1.1 bundle when the bundle is fetched and shipped beside it; a job whose options name Hudi's
prefer-writer class runs the backport when it is on the classpath.
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import tempfile
import zipfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from hudi_ops.errors import ConfigError
from hudi_ops.locks.occ_options import CONFLICT_RESOLUTION_STRATEGY, PREFER_WRITER

SOURCES = Path(__file__).parent / "backport"
#: Hudi's class -> the backport that replaces it, for the releases that need one
CLASSES = {PREFER_WRITER: "hudiops.backport.PreferWriterConflictResolutionStrategy"}
RELEASES = ("1.1.1",)
_JAR_PREFIX = "hudi-ops-backports-for-hudi-"
#: Hudi 1.1.1 runs on Java 8 and later
_JAVA_RELEASE = "8"


def backport_jar(folder: Path, release: str) -> Path:
    """Named by the sources' digest too, so a jar built from other sources is never taken for theirs."""
    digest = hashlib.sha256(b"".join(p.read_bytes() for p in _sources())).hexdigest()[:12]
    return folder / f"{_JAR_PREFIX}{release}-{digest}.jar"


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
                          "(Debian: `apt-get install openjdk-17-jdk-headless`)")
    with tempfile.TemporaryDirectory(prefix="hudi-ops-backports-") as work:
        classes = Path(work) / "classes"
        command = [javac, "--release", _JAVA_RELEASE, "-Xlint:-options", "-cp", str(bundle), "-d", str(classes),
                   *map(str, _sources())]
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise ConfigError(f"compiling hudi-ops' fixes for Hudi {release} against {bundle.name} failed: "
                              f"{done.stderr.strip()[:2000]}")
        partial = Path(work) / target.name
        with zipfile.ZipFile(partial, "w", zipfile.ZIP_DEFLATED) as jar:
            jar.writestr("META-INF/MANIFEST.MF", "Manifest-Version: 1.0\r\n\r\n")
            for path in sorted(classes.rglob("*.class")):
                jar.write(path, path.relative_to(classes).as_posix())
        shutil.move(partial, target)  # whole or not at all: a build cut off is done again
    for older in bundle.parent.glob(f"{_JAR_PREFIX}{release}-*.jar"):
        if older != target:  # built from sources since changed
            older.unlink()
    return target


def with_backports(spark: Any, options: Mapping[str, str]) -> dict[str, str]:
    """`options`, with each Hudi class they name that a backport on the session's classpath replaces
    swapped for the backport."""
    from py4j.protocol import Py4JJavaError

    chosen = dict(options)
    backport = CLASSES.get(str(chosen.get(CONFLICT_RESOLUTION_STRATEGY, "")).strip())
    if backport is not None:
        loader = spark.sparkContext._jvm.java.lang.Thread.currentThread().getContextClassLoader()
        try:
            loader.loadClass(backport)
        except Py4JJavaError:  # another Hudi (HUDI_OPS_HUDI_JARS) or a release that has the fix
            return chosen
        chosen[CONFLICT_RESOLUTION_STRATEGY] = backport
    return chosen
