"""`hudi-ops lock show|hold`: the table's lock as Hudi's writers take it, seen and held from the command line."""

from __future__ import annotations

import subprocess
import sys
import time
import uuid

from hudi_ops.cli import main
from hudi_ops.locks.held_lock import HeldLock
from hudi_ops.locks.lock_state import lock_state
from hudi_ops.options.occ import zookeeper_lock_options


def test_show_says_free_then_names_the_holder_and_its_waiters(zookeeper, capsys):
    key = f"cli-{uuid.uuid4().hex[:8]}"
    flags = ["lock", "show", "--zookeeper", zookeeper.url, "--base-path", "/cli-tests", "--lock-key", key]
    assert main(flags) == 0
    assert capsys.readouterr().out.strip() == f"lock {zookeeper.url}/cli-tests/{key}: free"
    options = zookeeper_lock_options(zookeeper.host, zookeeper.port, {"base_path": "/cli-tests"}, key)
    with HeldLock(options, key) as held:
        assert main(flags) == 0
        out = capsys.readouterr().out
        assert f"held by {held.provider.queue()[0]}, 0 writer(s) waiting" in out


def test_hold_keeps_writers_out_until_it_ends(zookeeper):
    key = f"cli-{uuid.uuid4().hex[:8]}"
    options = zookeeper_lock_options(zookeeper.host, zookeeper.port, {"base_path": "/cli-tests"}, key)
    holder = subprocess.Popen([sys.executable, "-m", "hudi_ops.cli", "lock", "hold", "--zookeeper", zookeeper.url,
                               "--base-path", "/cli-tests", "--lock-key", key, "--seconds", "3"],
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().startswith(f"holding {zookeeper.url}/cli-tests/{key}")
        assert lock_state(options, key).holder is not None
        started = time.monotonic()
        with HeldLock({**options, "hoodie.write.lock.wait_time_ms": "30000"}, key):  # a writer, waiting
            waited = time.monotonic() - started
        assert holder.wait(timeout=30) == 0 and "released" in holder.stdout.read()
        assert waited > 1  # it got the lock only once the hold ended
    finally:
        holder.kill()
        holder.stdout.close()


def test_a_lock_without_a_zookeeper_is_bad_input(capsys):
    assert main(["lock", "show", "--lock-key", "t"]) == 2
    assert "pass --zookeeper host:port" in capsys.readouterr().err
