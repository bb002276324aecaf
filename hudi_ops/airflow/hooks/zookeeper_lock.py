"""`ZookeeperLockHook`: one table's settings and the ZooKeeper connection every pipeline of it locks with.

The connection type `hudi_zookeeper` holds the ensemble: host (a name, or several separated by
commas) and port become `hoodie.write.lock.zookeeper.url`; the extras `base_path` and `lock_key`
name the lock znode (default `/hudi/locks` and the table's name), so every DAG of a table that uses
the same connection takes the same lock, as RFC-22's optimistic concurrency needs. The options are
Hudi's own: its `ZookeeperBasedLockProvider` takes the lock in every Spark job.
"""

from __future__ import annotations

from collections.abc import Mapping

from airflow.sdk import BaseHook

from hudi_ops.airflow import HOOK_NAME
from hudi_ops.locks.lock_state import lock_state
from hudi_ops.options.keys import ZK_URL, WriteConfig
from hudi_ops.options.occ import zookeeper_lock_options

#: the lock the Test button looks at when the hook serves no table (the connection's own lock_key wins)
_TEST_LOCK_KEY = "connection-test"


class ZookeeperLockHook(BaseHook):
    conn_name_attr = "zookeeper_conn_id"
    default_conn_name = "hudi_zookeeper_default"
    conn_type = "hudi_zookeeper"
    hook_name = HOOK_NAME

    def __init__(
        self, table_name: str = "", *, zookeeper_conn_id: str | None = default_conn_name,
        table_options: Mapping[str, str] | None = None,
    ) -> None:
        super().__init__()
        self.table_name = table_name
        self.zookeeper_conn_id = zookeeper_conn_id
        self.table_options = dict(table_options or {})

    def lock_options(self) -> dict[str, str]:
        """The `hoodie.*` options for optimistic concurrency with this connection's ZooKeeper lock
        (none when the hook has no connection: a single writer)."""
        if not self.zookeeper_conn_id:
            return {}
        conn = self.get_connection(self.zookeeper_conn_id)
        return zookeeper_lock_options(conn.host or "", conn.port, conn.extra_dejson, self.table_name,
                                      self.table_options.get(WriteConfig.CONCURRENCY_MODE.name))

    def write_options(self) -> dict[str, str]:
        """Table options, then the lock's (which win: every pipeline of the table must share them);
        hudi-ops' defaults go under both (hudi_ops.options.job_defaults)."""
        return {**self.table_options, **self.lock_options()}

    def test_connection(self) -> tuple[bool, str]:
        """The connection form's Test button: ZooKeeper answers at the connection's address and the
        lock's znode can be read (Airflow makes the hook with the connection id alone)."""
        table = self.table_name or _TEST_LOCK_KEY
        try:
            options = ZookeeperLockHook(table, zookeeper_conn_id=self.zookeeper_conn_id).lock_options()
        except Exception as e:
            return False, str(e)
        if not options:
            return False, "no ZooKeeper connection id: nothing to test"
        url = options[ZK_URL.name]
        state = lock_state(options, table)
        if state.error:
            return False, f"ZooKeeper at {url} did not answer: {state.error}"
        return True, f"ZooKeeper at {url} answered; {state.describe()}"
