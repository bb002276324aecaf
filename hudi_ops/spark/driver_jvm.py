"""The driver JVM of a hudi-ops job: JIT and GC settings for small jobs, and the class-data-sharing
archive they start with once it is built (hudi_ops.spark.class_sharing trains and writes it).

Most of a small job's time is its JVM, not its data: tens of thousands of Spark, Scala and Hudi classes
loaded and verified, and the JIT's optimising compiler busy on code that runs a few times. Java's
class-data sharing (CDS) maps classes from an archive instead. The archive is named after what it depends on (the `java`
spark-submit starts, Spark's folder and release, Hudi's jars), so a change to any of them means a new
name, and a job without a matching archive runs as before. A mismatch the name cannot see (a JDK updated
in place) costs the sharing, not the job: the JVM says so on stdout and loads its classes itself.

The small-job settings are the client compiler alone (`-XX:TieredStopAtLevel=1`) and the serial
collector, which keep a short job's JVM from spending the machine's cores on optimising compilation
and parallel GC threads. They go in `spark.driver.defaultJavaOptions`, which Spark puts before the
user's `spark.driver.extraJavaOptions`: a flag there wins, and setting `spark.driver.defaultJavaOptions`
itself replaces them all. A Kafka ingest whose task finds LARGE_EVENTS messages or more before
spark-submit (a catch-up) runs instead with the optimising compiler and the parallel collector, where
the data's time outweighs the JVM's start; another job that works through much data may want
`-XX:TieredStopAtLevel=4 -XX:-UseSerialGC -XX:+UseParallelGC` in its table's `spark_conf` (a second
collector beside the serial one stops the JVM: "Multiple garbage collectors selected").
docs/benchmarks.md has the measurements.

Also there: Hudi's bundled JOL, which sizes records for Hudi's spillable maps, first tries to attach an
agent to its own JVM and then the serviceability agent from JVMs it starts for that; a JVM may not
attach to itself (`jdk.attach.allowAttachSelf` is off) and ptrace forbids the other, so both fail after
seconds of a small write's time and JOL estimates from Unsafe, as these flags have it do at once.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import sys
from pathlib import Path

from hudi_ops.errors import ConfigError
from hudi_ops.maven import jars_dir
from hudi_ops.spark.hudi_bundle import hudi_jars
from hudi_ops.spark.jobs_python import JobsPython, jobs_python

DRIVER_JAVA_OPTIONS = "spark.driver.defaultJavaOptions"
_NO_JOL_ATTACH = ("-Djol.skipDynamicAttach=true", "-Djol.skipHotspotSAAttach=true")
SMALL_JOB_FLAGS = ("-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", *_NO_JOL_ATTACH)
#: a run whose work is large (what its task found before spark-submit): the JIT's optimising compiler and
#: the parallel collector, for throughput
LARGE_JOB_FLAGS = ("-XX:+UseParallelGC", *_NO_JOL_ATTACH)
#: the Kafka messages of a large run: a JSON ingest into a new table here took 22 s with the small-job
#: flags and 25 s with these at 100k messages, 38 s and 35 s at 300k, 76-86 s and 60 s at 1M
LARGE_EVENTS = 200_000
#: what the archive was trained on: another training run or other flags means another archive
_FORMAT = "jobs-3"


def archive_path(jobs: JobsPython | None = None) -> Path:
    """Where the archive for this machine's Java, the jobs' Spark and Hudi jars is (or would be). Java
    checks the jars of Spark's class path by size and time, so their folder's time is part of the name.
    `jobs`: the interpreter whose PySpark runs the jobs, by default this one."""
    jobs = jobs or jobs_python(sys.executable)
    key = "\n".join([_FORMAT, *SMALL_JOB_FLAGS, _java(), jobs.spark_home, jobs.pyspark_version,
                     str(os.stat(Path(jobs.spark_home) / "jars").st_mtime_ns),
                     *(f"{Path(j).name}:{Path(j).stat().st_size}" for j in hudi_jars())])
    return jars_dir() / f"hudi-ops-jobs-{hashlib.sha256(key.encode()).hexdigest()[:12]}.jsa"


def driver_java_options(*, large: bool = False, jobs: JobsPython | None = None) -> str:
    """The driver's JVM options for a hudi-ops job: the archive, when built, and the small-job flags (a
    `large` run's: LARGE_JOB_FLAGS). A machine where the archive cannot be named (no `java` found here,
    no PySpark 3.5 for the jobs, jars elsewhere) runs without it."""
    try:
        archive: Path | None = archive_path(jobs)
    except (ConfigError, OSError):
        archive = None
    shared = [f"-XX:SharedArchiveFile={archive}"] if archive is not None and archive.is_file() else []
    return " ".join([*shared, *(LARGE_JOB_FLAGS if large else SMALL_JOB_FLAGS)])


def is_local(master: str) -> bool:
    """Spark's local mode (`local`, `local[N]`, `local[*]`), whose executors are the driver's JVM; not
    `local-cluster[...]`, whose executors are JVMs of their own."""
    master = master.strip().lower()
    return master == "local" or master.startswith("local[")


def driver_conf(*, large: bool = False, jobs: JobsPython | None = None) -> dict[str, str]:
    """The Spark setting that carries `driver_java_options()`; a job's own setting replaces it."""
    return {DRIVER_JAVA_OPTIONS: driver_java_options(large=large, jobs=jobs)}


def _java() -> str:
    """The `java` Spark's launch scripts start: $JAVA_HOME's, else the first on PATH."""
    home = os.environ.get("JAVA_HOME")
    java = str(Path(home) / "bin" / "java") if home else shutil.which("java")
    if not java:
        raise ConfigError("Spark needs Java: install a JDK 17 (Debian: `apt-get install openjdk-17-jdk-headless`)")
    return os.path.realpath(java)
