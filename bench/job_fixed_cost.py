"""Where a small job's time goes, as a plain PySpark application and as hudi-ops runs it, measured in the
same run, alternating.

The baseline is the job as Hudi's quick start and PySpark's examples submit one: Hudi's jars with
`--jars`, the JVM's defaults, the session stopped by the application (bench/plain_pyspark_job.py).
hudi-ops' way (hudi_ops/spark/driver_jvm.py, hudi_ops/spark/__main__.py): the class-data-sharing
archive, the client compiler and the serial collector, Hudi's JOL told not to attach agents, and the
session left to the JVM's shutdown hook.

Two jobs: a compaction schedule that Hudi finds nothing to plan for (a service job with no work) and a
one-batch ingest of 1,000 rows; each alone, and the ingest also two at once (two tables) as a services
tick beside an ingest shares two cores. Each job says where its time went (hudi_ops.spark.__main__: the
JVM and Python starting, the Spark session, the job itself); the rest of the wall time is spark-submit's
launcher and the end (the session's stop, the JVM's exit). The fixed cost is everything but the job.
One JSON line: per variant the medians, and baseline / hudi-ops for the fixed cost and the total. """

from __future__ import annotations

import json
import re
import shutil
import statistics
import subprocess
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import common  # bench/, the script's folder
import pyarrow as pa
import pyarrow.parquet as pq

from hudi_ops.job_specs import CompactSpec, IngestSpec
from hudi_ops.spark.driver_jvm import SMALL_JOB_FLAGS, archive_path
from hudi_ops.spark.hudi_bundle import hudi_jars
from hudi_ops.spark.launch import HUDI_SESSION_CONF, spark_submit_command

ROUNDS = 5
ROWS = 1000
PLAIN_JOB = str(Path(__file__).parent / "plain_pyspark_job.py")


def plain_pyspark(args: list[str]) -> list[str]:
    command = [common.SPARK_SUBMIT, "--master", "local[2]", "--jars", ",".join(hudi_jars())]
    for key, value in {**HUDI_SESSION_CONF, **common.CONF}.items():
        command += ["--conf", f"{key}={value}"]
    return [*command, PLAIN_JOB, *args]


def hudi_ops(args: list[str]) -> list[str]:
    return spark_submit_command(args, conf=common.CONF, spark_submit=common.SPARK_SUBMIT)


VARIANTS = {"plain_pyspark": plain_pyspark, "hudi_ops": hudi_ops}
PHASES = re.compile(r"took ([\d.]+) s for the JVM and Python to start, ([\d.]+) s for the Spark session, "
                    r"([\d.]+) s for the job")


def submit(command: list[str]) -> dict[str, float]:
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    total = time.perf_counter() - started
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    # a job that finds nothing to do before Spark starts says nothing: all of it is fixed cost
    phases = PHASES.search(done.stdout)  # Spark sends the Python driver's stderr to stdout
    start, session, job = (float(x) for x in phases.groups()) if phases else (0.0, 0.0, 0.0)
    return {"total_s": total, "jvm_and_python_s": start, "session_s": session, "job_s": job,
            "launch_and_exit_s": total - start - session - job, "fixed_s": total - job}


class Table:
    def __init__(self, root: Path, name: str) -> None:
        self.base, self.landing, self.files = root / name, root / f"{name}-landing", 0
        self.landing.mkdir(parents=True)

    def land(self) -> None:
        self.files += 1
        pq.write_table(pa.table({"key": [f"k{i}" for i in range(ROWS)], "part": ["a", "b"] * (ROWS // 2),
                                 "ts": [self.files] * ROWS}), self.landing / f"{self.files}.parquet")

    def ingest(self) -> list[str]:
        self.land()
        return IngestSpec(base_path=str(self.base), table_name="t", source_path=str(self.landing),
                          record_key_field="key", partition_path_field="part", ordering_field="ts",
                          table_type="MERGE_ON_READ").to_argv()

    def idle_compaction(self) -> list[str]:
        # one delta commit since the table began: below Hudi's trigger of 5, nothing to plan
        return CompactSpec(base_path=str(self.base), mode="schedule").to_argv()


def medians(runs: list[dict[str, float]]) -> dict[str, float]:
    return {key: round(statistics.median(r[key] for r in runs), 2) for key in runs[0]}


def main() -> None:
    root = Path(tempfile.mkdtemp(prefix="hudi-ops-bench-"))
    try:
        a, b, idle = Table(root, "a"), Table(root, "b"), Table(root, "idle")
        for table in (a, b, idle):
            submit(hudi_ops(table.ingest()))
        runs: dict[str, dict[str, list]] = {v: {"idle_service": [], "ingest": [], "ingest_two_at_once": []}
                                            for v in VARIANTS}
        for _ in range(ROUNDS):
            for variant, command in VARIANTS.items():
                runs[variant]["idle_service"].append(submit(command(idle.idle_compaction())))
                runs[variant]["ingest"].append(submit(command(a.ingest())))
                with ThreadPoolExecutor(2) as pool:
                    both = [pool.submit(submit, command(table.ingest())) for table in (a, b)]
                    runs[variant]["ingest_two_at_once"] += [f.result() for f in both]
        figures = {v: {job: medians(r) for job, r in jobs.items()} for v, jobs in runs.items()}
        ratios = {f"{job}_{what}_plain_over_hudi_ops": round(
            figures["plain_pyspark"][job][f"{what}_s"] / figures["hudi_ops"][job][f"{what}_s"], 2)
            for job in ("idle_service", "ingest", "ingest_two_at_once") for what in ("fixed", "total")}
        print(json.dumps({"bench": "job_fixed_cost", "rounds": ROUNDS, "rows": ROWS,
                          "archive_built": archive_path().is_file(), "flags": " ".join(SMALL_JOB_FLAGS),
                          **figures, **ratios}))
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
