"""The local Airflow's SQLite connections: a savepoint opened with no transaction writes after another
connection's commit instead of failing "database is locked" at once (`backfill create` clearing a run)."""

from __future__ import annotations

import sqlite3
import threading
import time

import pytest

from local_platform.airflow_sqlite import CONNECT_ARGS


def _database(path):
    setup = sqlite3.connect(path)
    setup.execute("PRAGMA journal_mode=WAL")  # as Airflow sets it
    setup.execute("CREATE TABLE task_reschedule (ti_id TEXT)")
    setup.execute("INSERT INTO task_reschedule VALUES ('a')")
    setup.commit()
    setup.close()


def _clear_in_a_savepoint(connection, other_commits):
    """What Airflow's clear does inside `begin_nested`: read, then delete; `other_commits` runs between."""
    cursor = connection.cursor()
    cursor.execute("SAVEPOINT clear")
    assert cursor.execute("SELECT ti_id FROM task_reschedule").fetchall() == [("a",)]
    other_commits()
    cursor.execute("DELETE FROM task_reschedule WHERE ti_id = ?", ("a",))
    cursor.execute("RELEASE clear")
    connection.commit()


def test_a_plain_connection_fails_at_once_when_its_savepoint_read_went_stale(tmp_path):
    """SQLite's own behaviour, which the connection factory is for: the busy timeout is not used."""
    _database(tmp_path / "airflow.db")
    clearing = sqlite3.connect(tmp_path / "airflow.db", timeout=60)
    scheduler = sqlite3.connect(tmp_path / "airflow.db", timeout=60)

    def scheduler_commits():
        scheduler.execute("INSERT INTO task_reschedule VALUES ('b')")
        scheduler.commit()

    began = time.monotonic()
    with pytest.raises(sqlite3.OperationalError, match="database is locked"):
        _clear_in_a_savepoint(clearing, scheduler_commits)
    assert time.monotonic() - began < 5


def test_a_savepoint_holds_the_write_lock_so_another_writer_waits_and_both_commit(tmp_path):
    _database(tmp_path / "airflow.db")
    clearing = sqlite3.connect(tmp_path / "airflow.db", **CONNECT_ARGS)
    scheduler = sqlite3.connect(tmp_path / "airflow.db", timeout=60, check_same_thread=False)
    waited = []

    def scheduler_writes():
        began = time.monotonic()
        scheduler.execute("INSERT INTO task_reschedule VALUES ('b')")
        scheduler.commit()
        waited.append(time.monotonic() - began)

    writer = threading.Thread(target=scheduler_writes)

    def scheduler_tries_to_commit():
        writer.start()
        time.sleep(0.5)  # the scheduler is waiting for the lock the savepoint holds

    _clear_in_a_savepoint(clearing, scheduler_tries_to_commit)
    writer.join()
    assert waited and waited[0] >= 0.4  # it waited for the clear, then wrote
    assert clearing.execute("SELECT ti_id FROM task_reschedule").fetchall() == [("b",)]
