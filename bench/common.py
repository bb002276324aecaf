"""What the benchmarks that start spark-submits share: the command's settings, the table lock's
options as the Airflow hook builds them, and percentiles."""

from __future__ import annotations

import sys
from collections.abc import Mapping
from pathlib import Path

from hudi_ops.locks.occ_options import CONCURRENCY_MODE, zookeeper_lock_options
from hudi_ops.spark.session import LOOPBACK_CONF

SPARK_SUBMIT = str(Path(sys.executable).parent / "spark-submit")
CONF = {**LOOPBACK_CONF, "spark.sql.shuffle.partitions": "2"}
LOCK_BASE_PATH = "/bench"
#: a writer in a benchmark waits for the lock as long as it takes: the figures are its waits
PATIENT = {"hoodie.write.lock.wait_time_ms": "600000"}


def lock_options(zookeeper, table: str, table_options: Mapping[str, str] | None = None) -> dict[str, str]:
    """A table's options with its ZooKeeper lock, as the Airflow hook builds them (`zookeeper`: a
    hudi_ops.local ZookeeperServer); the jobs put hudi-ops' defaults under them."""
    options = {**PATIENT, **(table_options or {})}
    lock = zookeeper_lock_options(zookeeper.host, zookeeper.port, {"base_path": LOCK_BASE_PATH}, table,
                                  options.get(CONCURRENCY_MODE))
    return {**options, **lock}


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]
