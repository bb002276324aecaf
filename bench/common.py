"""What the benchmarks share: spark-submit's settings, the table lock's options as the Airflow hook builds
them, percentiles, threads that stop a run on failure, hudi-rs snapshots by batch, and the charts of docs/."""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from hudi_ops.options.keys import WriteConfig
from hudi_ops.options.occ import zookeeper_lock_options
from hudi_ops.spark.launch import LOOPBACK_CONF

SPARK_SUBMIT = str(Path(sys.executable).parent / "spark-submit")
CONF = {**LOOPBACK_CONF, "spark.sql.shuffle.partitions": "2"}
LOCK_BASE_PATH = "/bench"
#: a writer in a benchmark waits for the lock as long as it takes: the figures are its waits
PATIENT = {"hoodie.write.lock.wait_time_ms": "600000"}


def lock_options(zookeeper, table: str, table_options: Mapping[str, str] | None = None) -> dict[str, str]:
    """A table's options with its ZooKeeper lock, as the Airflow hook builds them (`zookeeper`: a
    local_platform ZookeeperServer); the jobs put hudi-ops' defaults under them."""
    options = {**PATIENT, **(table_options or {})}
    lock = zookeeper_lock_options(zookeeper.host, zookeeper.port, {"base_path": LOCK_BASE_PATH}, table,
                                  options.get(WriteConfig.CONCURRENCY_MODE.name))
    return {**options, **lock}


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def guarded(target: Callable[[], None], failed: Callable[[BaseException], None]) -> threading.Thread:
    """A daemon thread running `target`; its failure goes to `failed` (which stops the run's other threads)."""
    def run() -> None:
        try:
            target()
        except BaseException as e:
            failed(e)
    return threading.Thread(target=run, daemon=True)


def rows_by_batch(table: Path, day: str) -> dict[str, int] | None:
    """A hudi-rs snapshot of the table's `dt=day` partition: rows per `batch` value; None while the table
    has no completed commit."""
    import hudi
    import pyarrow as pa

    from hudi_ops.errors import TableNotFoundError
    from hudi_ops.format.meta_client import MetaClient

    try:
        if not MetaClient.open(table).timeline().completed:
            return None
    except TableNotFoundError:
        return None
    options = hudi.HudiReadOptions(filters=[("dt", "=", day)], projection=["batch"])
    batches = hudi.HudiTable(str(table)).read(options)
    counts: dict[str, int] = {}
    for b in pa.Table.from_batches(batches).column("batch").to_pylist() if batches else []:
        counts[b] = counts.get(b, 0) + 1
    return counts


def line_chart() -> tuple[Any, Any]:
    """A matplotlib figure and axes for a docs/*.svg line chart: text kept as text, a light grid."""
    import matplotlib

    matplotlib.use("svg")
    matplotlib.rcParams["svg.fonttype"] = "none"  # labels as text: small, searchable, diff-able
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 4))
    ax.grid(alpha=0.3, which="both")
    return fig, ax


def save_chart(fig: Any, path: Path) -> None:
    """The chart as SVG, without the date matplotlib would stamp (a re-plot of the same figures is the same file)."""
    fig.tight_layout()
    fig.savefig(path, metadata={"Date": None})
