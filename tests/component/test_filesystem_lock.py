"""The file-system lock excludes writers across threads and OS processes, and its errors say who holds it."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import threading
import time

import pyarrow as pa
import pytest

from hudi_ops import HudiTable
from hudi_ops.concurrency.locks.filesystem import FileSystemBasedLockProvider
from hudi_ops.errors import ConfigError, LockAcquisitionError
from hudi_ops.storage import Storage


def _provider(folder) -> FileSystemBasedLockProvider:
    return FileSystemBasedLockProvider(Storage.for_uri(folder))


def test_second_holder_waits_then_times_out_naming_the_lock_and_its_holder(tmp_path):
    a, b = _provider(tmp_path), _provider(tmp_path)
    a.acquire(1)
    t0 = time.monotonic()
    with pytest.raises(LockAcquisitionError, match=rf"{tmp_path}/lock.*pid={os.getpid()}"):
        b.acquire(0.3)
    assert time.monotonic() - t0 >= 0.3
    a.release()
    b.acquire(1)
    b.assert_held()
    b.release()
    assert not (tmp_path / "lock").exists()


def test_a_waiter_gets_the_lock_when_it_is_released(tmp_path):
    a, b = _provider(tmp_path), _provider(tmp_path)
    a.acquire(1)
    got = threading.Event()
    waiter = threading.Thread(target=lambda: (b.acquire(5), got.set()))
    waiter.start()
    assert not got.wait(0.2)
    a.release()
    assert got.wait(2)
    waiter.join()
    b.release()


def test_an_expired_lock_is_broken_and_its_old_owner_knows_it_lost_it(tmp_path):
    old = FileSystemBasedLockProvider(Storage.for_uri(tmp_path), expire_minutes=1)
    old.acquire(1)
    past = time.time() - 120
    os.utime(tmp_path / "lock", (past, past))
    new = FileSystemBasedLockProvider(Storage.for_uri(tmp_path), expire_minutes=1)
    new.acquire(1)
    with pytest.raises(LockAcquisitionError, match="no longer held"):
        old.assert_held()
    old.release()  # must not remove the new owner's lock
    new.assert_held()


def test_object_stores_are_refused():
    with pytest.raises(ConfigError, match="ZookeeperBasedLockProvider"):
        FileSystemBasedLockProvider(Storage.for_uri("mock://bucket/table"))


def test_unknown_provider_is_refused(tmp_path):
    table = HudiTable.create(tmp_path / "t", name="t", record_key="id")
    with pytest.raises(ConfigError, match="InProcessLockProvider"):
        table.upsert(pa.table({"id": [1]}), options={"hoodie.write.lock.provider": "com.example.Nope"})


_WRITER = textwrap.dedent("""
    import sys, pyarrow as pa
    from hudi_ops import HudiTable
    path, part, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
    table = HudiTable.open(path)
    opts = {"hoodie.write.lock.provider": "FileSystemBasedLockProvider"}
    for i in range(n):
        table.upsert(pa.table({"id": [f"{part}-{i}"], "ts": [i], "p": [part]}), options=opts)
""")


def test_writer_processes_on_disjoint_partitions_all_commit_in_one_total_order(tmp_path):
    table = HudiTable.create(tmp_path / "t", name="t", record_key="id", partition_fields=["p"], ordering_field="ts")
    procs = [subprocess.Popen([sys.executable, "-c", _WRITER, str(tmp_path / "t"), f"p{w}", "5"]) for w in range(3)]
    assert [p.wait(timeout=120) for p in procs] == [0, 0, 0]
    timeline = table.timeline()
    done = timeline.completed_writes()
    assert len(done) == 15 and not timeline.pending
    times = [t for i in done for t in (i.requested_time, i.completion_time)]
    assert len(set(times)) == len(times)  # one time source for every process
    assert sorted(table.read(columns=["id"]).column("id").to_pylist()) == sorted(
        f"p{w}-{i}" for w in range(3) for i in range(5))
