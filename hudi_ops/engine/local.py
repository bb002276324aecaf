"""The local engine: runs tasks in this process, on a small thread pool.

Threads help because the heavy parts (parquet encoding, compression, Arrow kernels) release the GIL.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

T = TypeVar("T")
R = TypeVar("R")


class LocalEngine:
    name = "local"

    def __init__(self, parallelism: int | None = None) -> None:
        self.parallelism = max(1, parallelism or min(4, os.cpu_count() or 1))

    def map(self, fn: Callable[[T], R], items: Sequence[T]) -> list[R]:
        if self.parallelism == 1 or len(items) <= 1:
            return [fn(i) for i in items]
        with ThreadPoolExecutor(self.parallelism, thread_name_prefix="hudi-ops-task") as pool:
            return list(pool.map(fn, items))
