"""A table's lock held from Python, the way a long table service holds it, so that Hudi's writers wait.

`hudi-ops lock hold` takes it for maintenance; the demo and the tests take it to line writers up
behind it and release them together.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from types import TracebackType

from hudi_ops.locks.zookeeper import ZookeeperBasedLockProvider
from hudi_ops.options.config_property import HoodieConfig
from hudi_ops.options.keys import LockConfig

#: what this process waited for the locks it took, in ms, by kind (`fence_wait`: a batch's fence,
#: `lock_wait`: the others): a job reports it with its result (its `durations_ms`)
_WAITED_MS: dict[str, float] = {}


def lock_waits() -> dict[str, float]:
    """The waits since the last `reset_lock_waits()`, in ms, by kind."""
    return {kind: round(ms, 1) for kind, ms in _WAITED_MS.items()}


def reset_lock_waits() -> None:
    _WAITED_MS.clear()


class HeldLock:
    """`with HeldLock(options, table): ...` holds the lock for the block, waiting for it up to
    `wait_s` (default `hoodie.write.lock.wait_time_ms`). A `transient` lock's znode is removed after
    it when nobody else waits in it (locks of plans come and go; a table's lock node stays). The wait
    counts toward `kind` in `lock_waits()`."""

    def __init__(self, options: Mapping[str, str], table_name: str, *, wait_s: float | None = None,
                 transient: bool = False, kind: str = "lock_wait") -> None:
        config = HoodieConfig(dict(options))
        self.provider = ZookeeperBasedLockProvider.from_config(config, table_name=table_name)
        self.wait_s = wait_s if wait_s is not None else (config.get(LockConfig.WAIT_MS) or 0) / 1000
        self.transient, self.kind = transient, kind

    def __enter__(self) -> HeldLock:
        began = time.monotonic()
        try:
            self.provider.acquire(self.wait_s)
        except BaseException:
            self.provider.close()
            raise
        finally:
            _WAITED_MS[self.kind] = _WAITED_MS.get(self.kind, 0.0) + (time.monotonic() - began) * 1000
        return self

    def waiting(self) -> int:
        """How many others wait for the lock (our node holds it)."""
        return len(self.provider.queue()) - 1

    def wait_for_waiters(self, n: int, timeout_s: float = 300.0) -> None:
        self._until(lambda: self.waiting() >= n, time.monotonic() + timeout_s,
                    f"fewer than {n} writers reached the table lock within {timeout_s:g}s")

    def line_up_writers(self, n: int, timeout_s: float = 300.0) -> None:
        """Until `n` jobs' Hudi writers wait to start their writes. A job with a batch fence first waits
        for the lock from Python (a commit under way completes first: hudi_ops.spark.jobs.batch_fence),
        then does its Spark work, and only then does Hudi take the lock to start the write: once `n` wait
        at their fences, they are let through together and the lock held again, ahead of their writers.
        Jobs without a fence line up at once."""
        deadline = time.monotonic() + timeout_s

        def lined_up() -> bool:
            writers, fences = self._waiters()
            return fences >= n or (writers >= n and not fences)

        self._until(lined_up, deadline, f"fewer than {n} jobs reached the table lock within {timeout_s:g}s")
        if self._waiters()[1]:
            self.provider.requeue(max(0.0, deadline - time.monotonic()))
            self._until(lambda: self._waiters()[0] >= n, deadline,
                        f"fewer than {n} Hudi writers reached the table lock within {timeout_s:g}s")

    @staticmethod
    def _until(done: Callable[[], bool], deadline: float, failure: str) -> None:
        while not done():
            if time.monotonic() > deadline:
                raise TimeoutError(failure)
            time.sleep(0.2)

    def _waiters(self) -> tuple[int, int]:
        """(Hudi's writers, others) waiting for the lock. Hudi's Java writers (Curator's lock recipe) write
        into their lock node their host's address (Hudi 1.1) or `application_id=<Spark application>`
        (later releases); hudi-ops' Python holders write nothing."""
        data = [self.provider.node_data(node) for node in self.provider.queue()[1:]]
        writers = sum(bool(d) for d in data)
        return writers, len(data) - writers

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None) -> None:
        try:
            self.provider.release()
            if self.transient:
                self.provider.remove_unused_node()
        finally:
            self.provider.close()
