"""The job's final JSON line."""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from typing import Any

from hudi_ops.spark.jobs.hudi_write import Written


@dataclass(frozen=True)
class JobResult:
    """What a run did; `instant` is its last commit, None when there was nothing to do."""

    job: str
    instant: str | None = None
    operation: str | None = None
    commits: int = 0
    rows: int = 0  # records the run inserted, updated or deleted
    inserts: int = 0
    updates: int = 0
    deletes: int = 0
    files: int = 0
    bytes: int = 0
    checkpoint: str | None = None
    reason: str | None = None  # why a run did nothing
    warnings: tuple[str, ...] = ()  # what failed after a commit had completed
    durations_ms: dict[str, float] = field(default_factory=dict)

    def plus(self, written: Written, *, checkpoint: str | None) -> JobResult:
        """This result with one more commit counted."""
        c = written.commit
        warning = (f"commit {c.instant} completed, then Hudi failed: {written.after_commit}",) \
            if written.after_commit else ()
        return JobResult(
            job=self.job, instant=c.instant, operation=c.operation, commits=self.commits + 1,
            rows=self.rows + c.inserts + c.updates + c.deletes, inserts=self.inserts + c.inserts,
            updates=self.updates + c.updates, deletes=self.deletes + c.deletes, files=self.files + c.files,
            bytes=self.bytes + c.bytes, checkpoint=checkpoint, warnings=self.warnings + warning,
            durations_ms=self.durations_ms,
        )

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class ServiceResult:
    """What a table service's run did. `instant` is the plan or service instant it scheduled, ran or
    found; None when there was nothing to do (`reason` says why)."""

    job: str
    mode: str | None = None
    instant: str | None = None
    #: scheduled | completed | completed by another run | planned (a dry run)
    outcome: str | None = None
    file_groups: int = 0  # in the plan
    files: int = 0  # written by the execution, or removed by a clean
    bytes: int = 0
    rows: int = 0  # records the execution wrote
    reason: str | None = None
    warnings: tuple[str, ...] = ()
    details: dict[str, Any] = field(default_factory=dict)
    durations_ms: dict[str, float] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def since(started: float) -> dict[str, float]:
    """`durations_ms` of a run that began at `started` (time.perf_counter())."""
    return {"total": round((time.perf_counter() - started) * 1000, 1)}
