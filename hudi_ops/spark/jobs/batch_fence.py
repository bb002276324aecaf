"""One attempt at a time per batch: the fence a writer holds around its batch.

An Airflow task that dies hard (a lost worker, the OOM killer) leaves its spark-submit running, and
Airflow's retry starts a second attempt of the same batch; a window triggered twice does the same.
Two writers inserting the same new keys at once each put them into file groups of their own, which
Hudi's OCC does not see as overlapping: both commit and every key is there twice. So a writer holds
its batch's fence (hudi_ops.locks.job_locks.batch_lock) from before it looks for work until it has
committed: a second attempt waits, then finds the batch committed and writes nothing, or gives up
after `--wait-seconds` (exit 3, retried).

The fence must still be the writer's when it commits: a ZooKeeper session that expired in an outage
or a long pause lets another attempt in. Hudi takes the table's lock to commit, and hudi-ops' lock
provider (hudi_ops.spark.hudi_java) checks there that the fence's node is still this job's session's.
An attempt that lost its fence after that check may still be completing its commit, holding the
table's lock: so the writer that takes a fence takes the table's lock once, before it looks for work,
and sees that commit.

A table without a lock has one writer by design (the tables config refuses a second pipeline there);
two attempts of its one pipeline are told apart by the timeline: a write in flight with a live
heartbeat is another attempt at work.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from types import TracebackType

from hudi_ops.errors import ConcurrentJobError, LockAcquisitionError, LockHeldError, TableNotFoundError
from hudi_ops.format.meta_client import MetaClient
from hudi_ops.locks.held_lock import HeldLock
from hudi_ops.locks.job_locks import batch_lock
from hudi_ops.options.config_property import HoodieConfig
from hudi_ops.options.keys import BatchFenceConfig
from hudi_ops.options.occ import has_zookeeper_lock
from hudi_ops.read.heartbeats import live_writes

#: the fence's node and its session, for hudi-ops' lock provider (FencedZookeeperLockProvider.java)
FENCE_PATH = BatchFenceConfig.PATH.name
FENCE_SESSION = BatchFenceConfig.SESSION.name


def ingest_batch(source_id: str) -> str:
    """The fence of an ingest of a source folder (`Storage.table_id`): a znode name, whatever the URI."""
    return "ingest." + hashlib.sha256(source_id.encode()).hexdigest()[:16]


def backfill_batch(day: str) -> str:
    """The fence of a backfill's day: every backfill of that day, whatever its run or window."""
    return f"backfill.{day}"


class BatchFence:
    """`with BatchFence(base_path, options, table, batch, wait_s) as fence: ...` around a batch's work;
    its writes take `fence.write_options(options)`."""

    def __init__(self, base_path: str, options: Mapping[str, str], table_name: str, batch: str,
                 wait_s: float) -> None:
        self.base_path, self.options, self.table_name, self.batch, self.wait_s = (
            base_path, options, table_name, batch, wait_s)
        self._held: HeldLock | None = None

    def __enter__(self) -> BatchFence:
        if not has_zookeeper_lock(self.options):
            self._no_write_in_flight()
            return self
        try:
            self._held = batch_lock(self.options, self.table_name, self.batch, self.wait_s).__enter__()
        except LockHeldError as e:
            raise ConcurrentJobError(f"another attempt of {self.batch} on {self.base_path} held its fence for "
                                     f"the {self.wait_s:g}s this one waits (--wait-seconds); retry once it has "
                                     f"ended ({e})") from e
        try:
            with HeldLock(self.options, self.table_name):  # a commit under way completes first
                pass
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def write_options(self, options: Mapping[str, str]) -> dict[str, str]:
        """`options` with the fence for the lock provider to check at every take of the table's lock."""
        if self._held is None:
            return dict(options)
        try:  # a fence lost while Spark started: stop before writing
            self._held.provider.assert_held()
        except LockAcquisitionError as e:
            raise ConcurrentJobError(f"the fence of {self.batch} on {self.base_path} was lost before the write began, "
                                     f"and another attempt may hold it now; retry ({e})") from e
        node, session = self._held.provider.held_node()
        return {**options, FENCE_PATH: node, FENCE_SESSION: str(session)}

    def _no_write_in_flight(self) -> None:
        try:
            meta = MetaClient.open(self.base_path)
        except TableNotFoundError:
            return
        live = live_writes(meta, HoodieConfig(dict(self.options)))
        if live:
            raise ConcurrentJobError(
                f"write {', '.join(live)} is in flight on {self.base_path}, a table without a lock (a single writer): "
                f"another attempt of {self.batch} may be at work; retry once it has ended (give the table a "
                "ZooKeeper lock, zookeeper_conn_id, to have attempts wait for each other)")

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 tb: TracebackType | None) -> None:
        held, self._held = self._held, None
        if held is not None:
            held.__exit__(kind, error, tb)
