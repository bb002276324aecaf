"""The local Airflow's SQLite connections: a write lock waited for, and savepoints that take it at once.

The scheduler, the dag-processor, the triggerer, the api-servers and a CLI all write the one file (in WAL
mode, as Airflow sets it). A connection waits up to `timeout` seconds for another's write lock (Python's
default, 5 s, failed a CLI's `backfill create` on 2 busy cores). That wait does not cover one case:
Airflow opens a savepoint (SQLAlchemy's `begin_nested`, e.g. `backfill create` clearing a run again) with no
transaction open, which SQLite begins as a read; its first write then fails "database is locked" at once,
without waiting, whenever another connection committed since the read began (the snapshot is stale). Such a
savepoint here begins its transaction `BEGIN IMMEDIATE`, holding the write lock from its first read.
"""

from __future__ import annotations

import sqlite3
from typing import Any


class _Cursor(sqlite3.Cursor):
    def execute(self, sql: str, *parameters: Any) -> sqlite3.Cursor:
        if not self.connection.in_transaction and sql.lstrip()[:9].upper() == "SAVEPOINT":
            super().execute("BEGIN IMMEDIATE")
        return super().execute(sql, *parameters)


class ImmediateSavepoints(sqlite3.Connection):
    """A connection whose first savepoint begins a write transaction."""

    def cursor(self, factory: Any = _Cursor) -> sqlite3.Cursor:
        return super().cursor(factory)


#: `[database] sql_alchemy_connect_args` (its import path); the async engine's (aiosqlite) takes the wait only
CONNECT_ARGS = {"timeout": 60, "factory": ImmediateSavepoints}
ASYNC_CONNECT_ARGS = {"timeout": 60}
