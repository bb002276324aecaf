"""An ingest and a backfill, each its own spark-submit, on one table with ZooKeeper OCC.

To make the two writers overlap for certain, the test holds the table's ZooKeeper lock while both
jobs start: each blocks in start_commit, and only when both wait in line is the lock released. Both
then write at the same time and commit one after the other, so the second sees a commit that
completed after it started.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import hudi
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from kazoo.client import KazooClient

from hudi_ops import HudiTable
from hudi_ops.concurrency.locks.zookeeper import ZookeeperBasedLockProvider
from hudi_ops.config import HoodieConfig
from tests.integration.lock_options import zookeeper_lock

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent


def _submit(job: str, base: Path, source: Path, options: dict[str, str], *extra: str) -> subprocess.Popen:
    conf = [a for k, v in options.items() for a in ("--hoodie-conf", f"{k}={v}")]
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}", "PYSPARK_PYTHON": sys.executable}
    return subprocess.Popen(
        [str(BIN / "spark-submit"), "--master", "local[1]", "--conf", "spark.ui.enabled=false",
         str(ROOT / "hudi_ops" / "spark" / "__main__.py"), job, "--target-base-path", str(base),
         "--source-path", str(source), "--record-key-field", "id", "--partition-path-field", "city", *conf, *extra],
        cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
    )


@pytest.mark.parametrize(("backfill_city", "expected_codes"), [("nyc", [0, 0]), ("sf", [0, 3])],
                         ids=["disjoint-partitions", "same-file-group"])
def test_ingest_and_backfill_at_once(tmp_path, zookeeper, backfill_city, expected_codes):
    options = zookeeper_lock(zookeeper.url)
    base = tmp_path / "t"
    table = HudiTable.create(base, name="t", record_key="id", partition_fields=["city"])
    table.upsert(pa.table({"id": [1, 2, 3, 4], "v": ["seed"] * 4, "city": ["sf", "sf", backfill_city, backfill_city]}),
                 options=options)
    ingest_src, backfill_src = tmp_path / "stream", tmp_path / "history"
    ingest_src.mkdir()
    (backfill_src / "dt=2026-01-01").mkdir(parents=True)
    pq.write_table(pa.table({"id": [1, 2], "v": ["ingest"] * 2, "city": ["sf", "sf"]}), ingest_src / "a.parquet")
    pq.write_table(pa.table({"id": [3, 4], "v": ["backfill"] * 2, "city": [backfill_city] * 2}),
                   backfill_src / "dt=2026-01-01" / "a.parquet")

    holder = ZookeeperBasedLockProvider.from_config(HoodieConfig(options), table_name="t")
    holder.acquire(10)
    window = ("--start", "2026-01-01", "--end", "2026-01-01")
    jobs = {"ingest": (ingest_src, ()), "backfill": (backfill_src, window)}
    procs = {name: _submit(name, base, src, options, *extra) for name, (src, extra) in jobs.items()}
    raw = KazooClient(hosts=zookeeper.url)
    raw.start()
    try:
        deadline = time.monotonic() + 120
        while len(raw.get_children(holder.lock_path)) < 3:  # both jobs wait in line behind us
            assert time.monotonic() < deadline, "the jobs never reached the lock"
            assert all(p.poll() is None for p in procs.values())
            time.sleep(0.1)
    finally:
        raw.stop()
        raw.close()
        holder.close()
    codes = {name: p.wait(timeout=300) for name, p in procs.items()}
    assert sorted(codes.values()) == expected_codes
    for name, code in codes.items():
        if code == 3:  # the loser is retried, as Airflow would, and commits
            src, extra = jobs[name]
            assert _submit(name, base, src, options, *extra).wait(timeout=300) == 0
    want = [(1, "ingest"), (2, "ingest"), (3, "backfill"), (4, "backfill")]
    ours = sorted((r["id"], r["v"]) for r in HudiTable.open(base).read(columns=["id", "v"]).to_pylist())
    assert ours == want
    rs = pa.Table.from_batches(hudi.HudiTable(str(base)).read()).select(["id", "v"]).to_pylist()
    assert sorted((r["id"], r["v"]) for r in rs) == want
    assert not HudiTable.open(base).timeline().pending


def test_a_job_killed_before_its_commit_and_run_again_leaves_no_duplicates(tmp_path, zookeeper):
    options = zookeeper_lock(zookeeper.url)
    base, source = tmp_path / "t", tmp_path / "stream"
    table = HudiTable.create(base, name="t", record_key="id", partition_fields=["city"])
    table.upsert(pa.table({"id": [1], "v": ["seed"], "city": ["sf"]}), options=options)
    source.mkdir()
    pq.write_table(pa.table({"id": [1, 2, 3], "v": ["new"] * 3, "city": ["sf"] * 3}), source / "a.parquet")

    job = _submit("ingest", base, source, options)
    deadline = time.monotonic() + 120
    while not table.timeline().pending:  # the job has started its instant...
        assert time.monotonic() < deadline and job.poll() is None
        time.sleep(0.01)
    holder = ZookeeperBasedLockProvider.from_config(HoodieConfig(options), table_name="t")
    holder.acquire(30)  # ...and will find the lock taken when it wants to commit
    raw = KazooClient(hosts=zookeeper.url)
    raw.start()
    try:
        while len(raw.get_children(holder.lock_path)) < 2:
            assert time.monotonic() < deadline and job.poll() is None
            time.sleep(0.05)
        os.killpg(job.pid, signal.SIGKILL)  # spark-submit's JVM and its Python driver
        job.wait()
    finally:
        raw.stop()
        raw.close()
        holder.close()
    [pending] = HudiTable.open(base).timeline().pending
    assert sorted(r["id"] for r in HudiTable.open(base).read(columns=["id"]).to_pylist()) == [1]

    assert _submit("ingest", base, source, options).wait(timeout=300) == 0
    want = [(1, "new"), (2, "new"), (3, "new")]
    ours = sorted((r["id"], r["v"]) for r in HudiTable.open(base).read(columns=["id", "v"]).to_pylist())
    assert ours == want
    rs = pa.Table.from_batches(hudi.HudiTable(str(base)).read()).select(["id", "v"]).to_pylist()
    assert sorted((r["id"], r["v"]) for r in rs) == want
    assert [i.requested_time for i in HudiTable.open(base).timeline().pending] == [pending.requested_time]
