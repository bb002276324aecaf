"""The lock line of the timeline view: who holds a table's ZooKeeper lock and who waits, read live."""

from __future__ import annotations

import json
import threading
import time

from hudi_ops.airflow.hooks.zookeeper_lock import ZookeeperLockHook
from hudi_ops.airflow.ui.lock_line import table_lock_state as lock_state
from hudi_ops.locks.zookeeper import ZookeeperBasedLockProvider
from hudi_ops.options.config_property import HoodieConfig
from local_platform.ports import free_port


def _provider(table: str) -> ZookeeperBasedLockProvider:
    return ZookeeperBasedLockProvider.from_config(HoodieConfig(ZookeeperLockHook(table).write_options()),
                                                  table_name=table)


def test_the_lock_shows_free_then_its_holder_and_waiters(zookeeper_connection, zookeeper):
    table = "lock_state_trips"
    state = lock_state(table, ZookeeperLockHook.default_conn_name)
    assert (state.holder, state.waiting, state.error) == (None, 0, None)
    assert state.lock == f"{zookeeper.url}/hudi-ops-airflow-tests/{table}" and state.describe().endswith(": free")

    holder, waiter = _provider(table), _provider(table)
    try:
        holder.acquire(10)
        held = lock_state(table, ZookeeperLockHook.default_conn_name)
        assert held.holder is not None and held.holder.endswith("lock-0000000000") and held.waiting == 0
        queued = threading.Thread(target=waiter.acquire, args=(30,))
        queued.start()
        deadline = time.monotonic() + 10
        while lock_state(table, ZookeeperLockHook.default_conn_name).waiting < 1:
            assert time.monotonic() < deadline, "the waiter never showed"
            time.sleep(0.1)
        assert "held by" in lock_state(table, ZookeeperLockHook.default_conn_name).describe()
        holder.release()
        queued.join(timeout=10)
        assert lock_state(table, ZookeeperLockHook.default_conn_name).waiting == 0  # the waiter holds it now
    finally:
        holder.close()
        waiter.close()


def test_no_connection_means_a_single_writer():
    assert lock_state("t", None).describe() == "no ZooKeeper lock configured: a single writer"


def test_a_zookeeper_that_does_not_answer_is_shown_not_raised(monkeypatch):
    monkeypatch.setenv("AIRFLOW_CONN_HUDI_ZOOKEEPER_DOWN", json.dumps(
        {"conn_type": "hudi_zookeeper", "host": "127.0.0.1", "port": free_port()}))
    state = lock_state("t", "hudi_zookeeper_down")
    assert state.error and "lock state unknown" in state.describe()
    # a page does not wait out a writer's connection timeout (15 s) when ZooKeeper is down
    assert "within 3s" in state.error, state.error


def test_the_connection_forms_test_button_reaches_zookeeper_or_says_why_not(zookeeper_connection, zookeeper,
                                                                            monkeypatch):
    # Airflow makes the hook from the connection id alone
    ok, message = ZookeeperLockHook(zookeeper_conn_id=ZookeeperLockHook.default_conn_name).test_connection()
    assert ok and message.startswith(f"ZooKeeper at {zookeeper.url} answered") and message.endswith(": free")
    monkeypatch.setenv("AIRFLOW_CONN_HUDI_ZOOKEEPER_DOWN", json.dumps(
        {"conn_type": "hudi_zookeeper", "host": "127.0.0.1", "port": free_port()}))
    ok, message = ZookeeperLockHook(zookeeper_conn_id="hudi_zookeeper_down").test_connection()
    assert not ok and "did not answer" in message
    ok, message = ZookeeperLockHook(zookeeper_conn_id="no_such_connection").test_connection()
    assert not ok and "no_such_connection" in message
