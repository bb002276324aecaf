"""The class-data-sharing archive of hudi-ops' jobs (hudi_ops.spark.driver_jvm says why and where): a
training application that runs each kind of job once in a JVM that dumps the classes it loaded at exit.
`python -m hudi_ops.jars fetch class-sharing` (`make jars` runs it) builds it beside Hudi's bundle."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from hudi_ops.errors import ConfigError
from hudi_ops.job_specs import ArchiveSpec, BackfillSpec, CleanSpec, ClusterSpec, CompactSpec, IngestSpec, JobSpec
from hudi_ops.options.keys import CleanConfig, CompactionConfig
from hudi_ops.spark.__main__ import main
from hudi_ops.spark.driver_jvm import DRIVER_JAVA_OPTIONS, SMALL_JOB_FLAGS, archive_path
from hudi_ops.spark.launch import LOOPBACK_CONF, spark_submit_command
from hudi_ops.spark.session import spark_session


def build() -> Path:
    """The archive for this machine, written unless it is already there."""
    target = archive_path()
    if target.is_file():
        return target
    with tempfile.TemporaryDirectory(prefix="hudi-ops-class-sharing-") as work:
        dump = Path(work) / target.name
        options = " ".join([f"-XX:ArchiveClassesAtExit={dump}", *SMALL_JOB_FLAGS])
        conf = {**LOOPBACK_CONF, DRIVER_JAVA_OPTIONS: options}
        command = spark_submit_command([work], master="local[1]", spark_submit=_spark_submit(),
                                       application=__file__, conf=conf)
        env = {**os.environ, "PYSPARK_PYTHON": os.environ.get("PYSPARK_PYTHON", sys.executable)}
        done = subprocess.run(command, capture_output=True, text=True, check=False, env=env)
        if done.returncode != 0 or not dump.is_file():
            tail = "\n".join((done.stdout + done.stderr).splitlines()[-20:])
            raise ConfigError(f"building the class-data-sharing archive failed (exit {done.returncode}); jobs run "
                              f"without it. The training run's last lines:\n{tail}")
        os.replace(dump, target)
    return target


def _spark_submit() -> str:
    """This interpreter's spark-submit (pip's pyspark puts it beside python), else the one on PATH."""
    here = Path(sys.executable).parent / "spark-submit"
    return str(here) if here.is_file() else shutil.which("spark-submit") or "spark-submit"


def _train(work: Path) -> None:
    """Each kind of job once, in this JVM, on two small tables: what the archive holds."""
    spark = spark_session("hudi-ops-class-sharing")
    rows = [(f"k{i}", f"2026-01-0{1 + i % 2}", i, float(i)) for i in range(20)]
    spark.createDataFrame(rows, "id string, dt string, ts long, value double").write.parquet(str(work / "in" / "a"))
    # a backfill reads dt=YYYY-MM-DD folders
    spark.createDataFrame(rows[:10], "id string, dt string, ts long, value double").write.partitionBy("dt").parquet(
        str(work / "days"))
    table = {"table_name": "t", "record_key_field": "id", "partition_path_field": "dt", "ordering_field": "ts"}
    jobs: list[JobSpec] = []
    for kind in ("COPY_ON_WRITE", "MERGE_ON_READ"):
        base = str(work / kind)
        jobs += [IngestSpec(base_path=base, source_path=str(work / "in"), table_type=kind, **table),
                 BackfillSpec(base_path=base, source_path=str(work / "days"), start="2026-01-01", end="2026-01-02",
                              **table)]
        if kind == "MERGE_ON_READ":
            jobs.append(CompactSpec(base_path=base, hoodie_conf={CompactionConfig.MAX_DELTA_COMMITS.name: "1"}))
        jobs += [ClusterSpec(base_path=base),
                 CleanSpec(base_path=base, hoodie_conf={CleanConfig.COMMITS_RETAINED.name: "1"}),
                 ArchiveSpec(base_path=base)]
    failed = [job.JOB for job in jobs if main(job.to_argv(), spark=spark) != 0]
    spark.stop()
    if failed:
        raise SystemExit(f"training jobs failed: {failed}")


if __name__ == "__main__":  # the training run, as build() submits it
    _train(Path(sys.argv[1]))
