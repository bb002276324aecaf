"""Failed writers: invisible while pending, rolled back once their heartbeat expires, never while alive."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time

import hudi
import pyarrow as pa
import pytest

from hudi_ops import HudiTable
from hudi_ops.cli import main
from hudi_ops.concurrency.heartbeat import Heartbeat
from hudi_ops.errors import HeartbeatExpiredError

FAST = {"hoodie.client.heartbeat.interval_in_ms": "100", "hoodie.client.heartbeat.tolerable.misses": "2"}

_DYING_WRITER = textwrap.dedent("""
    import sys, time, pyarrow as pa
    from hudi_ops import HudiTable
    client = HudiTable.open(sys.argv[1]).write_client()
    t = client.start_commit()
    client.upsert(pa.table({"id": list(range(100)), "ts": [9] * 100, "p": ["a", "b"] * 50}), t)
    print(t, flush=True)
    time.sleep(600)
""")


def _snapshot(table: HudiTable) -> list[tuple]:
    ours = sorted((r["id"], r["ts"]) for r in table.read(columns=["id", "ts"]).to_pylist())
    rs = pa.Table.from_batches(hudi.HudiTable(table.base_path).read()).select(["id", "ts"]).to_pylist()
    assert sorted((r["id"], r["ts"]) for r in rs) == ours
    return ours


def _files_naming(table: HudiTable, instant: str) -> list[str]:
    return sorted(f.path for f in table.meta.storage.walk_files("") if instant in f.path)


@pytest.fixture
def table(tmp_path):
    t = HudiTable.create(tmp_path / "t", name="t", record_key="id", partition_fields=["p"], ordering_field="ts")
    t.upsert(pa.table({"id": [1, 2], "ts": [1, 1], "p": ["a", "b"]}))
    return t


def test_a_killed_writer_stays_invisible_then_is_rolled_back_after_its_heartbeat_expires(table):
    before = _snapshot(table)
    with subprocess.Popen([sys.executable, "-c", _DYING_WRITER, table.base_path], stdout=subprocess.PIPE,
                          text=True) as proc:
        instant = proc.stdout.readline().strip()
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
    assert [i.requested_time for i in table.timeline().pending] == [instant]
    assert any(f.endswith(".parquet") for f in _files_naming(table, instant))  # its data files exist...
    assert _snapshot(table) == before  # ...and nobody sees them

    # Hudi's default expiry (2 x 60 s) has not passed: the instant may still be alive
    assert table.rollback_failed_writes(dry_run=False) == []

    time.sleep(0.3)
    [planned] = table.rollback_failed_writes(dry_run=True, options=FAST)
    assert planned.rolled_back == instant and planned.files_deleted
    [result] = table.rollback_failed_writes(dry_run=False, options=FAST)
    assert (result.rolled_back, result.action) == (instant, "commit")
    assert _files_naming(table, instant) == []  # data, markers, heartbeat and timeline files
    timeline = table.timeline()
    assert [i.file_name.split(".", 1)[1] for i in timeline.states_of(result.rollback_instant)] == [
        "rollback.requested", "rollback.inflight", "rollback"]
    meta = timeline.read_bytes(timeline.completed_instant(result.rollback_instant))
    assert instant.encode() in meta
    assert _snapshot(table) == before
    table.upsert(pa.table({"id": [3], "ts": [1], "p": ["a"]}))  # the table goes on
    assert len(_snapshot(table)) == 3


def test_a_slow_but_live_writer_is_never_rolled_back(table):
    client = table.write_client(FAST)
    t = client.start_commit()
    statuses = client.upsert(pa.table({"id": [1], "ts": [5], "p": ["a"]}), t)
    deadline = time.monotonic() + 0.8
    while time.monotonic() < deadline:
        assert table.rollback_failed_writes(dry_run=False, options=FAST) == []
        time.sleep(0.05)
    client.commit(t, statuses)
    assert (1, 5) in _snapshot(table)


def test_a_writer_whose_own_heartbeat_expired_abandons_its_commit(table, monkeypatch):
    before = _snapshot(table)
    client = table.write_client(FAST)
    t = client.start_commit()
    statuses = client.upsert(pa.table({"id": [1], "ts": [5], "p": ["a"]}), t)
    monkeypatch.setattr(Heartbeat, "beat", lambda self: None)  # the process stalls: no more heartbeats
    time.sleep(0.4)
    with pytest.raises(HeartbeatExpiredError, match=t):
        client.commit(t, statuses)
    assert _snapshot(table) == before
    assert _files_naming(table, t) == []


def test_rollback_without_markers_finds_the_files_by_instant(table):
    client = table.write_client(FAST)
    t = client.start_commit()
    client.upsert(pa.table({"id": [7], "ts": [1], "p": ["c"]}), t)
    client.close()  # stops heartbeats, leaves the instant pending
    table.meta.storage.delete_dir(f".hoodie/.temp/{t}")
    time.sleep(0.3)
    [result] = table.rollback_failed_writes(dry_run=False, options=FAST)
    assert [f.rsplit("/", 1)[0] for f in result.files_deleted] == ["c"]
    assert _files_naming(table, t) == []


def test_cli_rollback_failed(table, capsys):
    client = table.write_client(FAST)
    t = client.start_commit()
    client.upsert(pa.table({"id": [8], "ts": [1], "p": ["a"]}), t)
    client.close()
    time.sleep(0.3)
    conf = [a for k, v in FAST.items() for a in ("--hoodie-conf", f"{k}={v}")]
    assert main(["rollback-failed", table.base_path, "--dry-run", *conf]) == 0
    assert f'"rolled_back": "{t}"' in capsys.readouterr().out and table.timeline().pending
    assert main(["rollback-failed", table.base_path, *conf]) == 0
    assert not table.timeline().pending
