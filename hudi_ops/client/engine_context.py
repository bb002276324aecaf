"""The engine interface the write path is written against (Hudi's HoodieEngineContext idea).

The client plans per-file-group tasks on the driver and hands them to an engine, which runs a
picklable function over them wherever it likes and returns the results in order. Engines live in
`hudi_ops.engine` (local) and the Spark layer, above the client, and are handed to it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol, TypeVar

T = TypeVar("T")
R = TypeVar("R")


class Engine(Protocol):
    name: str

    def map(self, fn: Callable[[T], R], items: Sequence[T]) -> list[R]:
        """Apply `fn` to every item (possibly in parallel, possibly elsewhere); results in input order."""
        ...
