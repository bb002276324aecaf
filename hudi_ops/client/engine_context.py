"""The engine interface the write path is written against (Hudi's HoodieEngineContext idea).

The client plans per-file-group tasks on the driver and hands them to an engine, which runs a
picklable function over them wherever it likes and returns the results in order. Engines live in
`hudi_ops.engine` (local) and the Spark layer, above the client, and are handed to it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, runtime_checkable

import pyarrow as pa

if TYPE_CHECKING:
    from hudi_ops.client.handles import WriteStatus
    from hudi_ops.client.write_job import WriteJob

T = TypeVar("T")
R = TypeVar("R")


@runtime_checkable
class Engine(Protocol):
    name: str

    def map(self, fn: Callable[[T], R], items: Sequence[T]) -> list[R]:
        """Apply `fn` to every item (possibly in parallel, possibly elsewhere); results in input order."""
        ...


@runtime_checkable
class DatasetEngine(Engine, Protocol):
    """An engine that also plans writes over its own distributed data sets (e.g. Spark DataFrames)."""

    def input_schema(self, data: Any) -> pa.Schema:
        """The Arrow schema of `data`'s rows, as the engine will hand them to the write's functions."""
        ...

    def write_dataset(self, job: WriteJob, data: Any) -> list[WriteStatus]:
        """Plan and run `job` over `data`; calls `job.begin` with the workload profile before writing files."""
        ...
