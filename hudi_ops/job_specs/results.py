"""The job's final JSON line: what a run did (`JobResult` for writers, `ServiceResult` for services), or
why it failed (`JobFailure`). The Spark application prints it; the operators read it back with
`parse_result_line` (from the file the operator names, $HUDI_OPS_RESULT_FILE), so both sides share
one schema."""

from __future__ import annotations

import json
import os
import sys
import time
from dataclasses import asdict, dataclass, field, fields
from typing import Any, Protocol

from hudi_ops.errors import HudiOpsError
from hudi_ops.s3_settings import S3Settings
from hudi_ops.storage import Storage

OK, FAILED = "ok", "failed"
#: a writer's outcomes
COMMITTED, ALREADY_COMMITTED = "committed", "already committed"

#: a file the job also writes its final line to, when set: the operators read it there rather than
#: from spark-submit's output, which the Spark provider keeps to itself. A path on the Airflow worker
#: in client mode; a URI on the table's storage when the driver runs on the cluster.
RESULT_FILE_ENV = "HUDI_OPS_RESULT_FILE"


class CommitCounts(Protocol):
    """What one commit did, as the control plane reads it from the commit's metadata."""

    instant: str
    operation: str | None
    inserts: int
    updates: int
    deletes: int
    files: int
    bytes: int


@dataclass(frozen=True)
class JobResult:
    """What a writer's run did; `instant` is its last commit, None when there was nothing to do."""

    job: str
    instant: str | None = None
    #: committed | already committed (another attempt of the batch made `instant`; this run wrote
    #: nothing) | None: nothing to do
    outcome: str | None = None
    operation: str | None = None
    commits: int = 0
    rows: int = 0  # records the run inserted, updated or deleted
    inserts: int = 0
    updates: int = 0
    deletes: int = 0
    files: int = 0
    bytes: int = 0
    error_table_records: int = 0  # messages that went to Hudi's error table (hudi_ops.sources.error_table)
    checkpoint: str | None = None
    reason: str | None = None  # why a run did nothing
    warnings: tuple[str, ...] = ()  # what failed after a commit had completed
    durations_ms: dict[str, float] = field(default_factory=dict)
    catalog: str | None = None  # `database.table` the run synced its commit to (hudi_ops.spark.jobs.meta_sync)

    def plus(self, commit: CommitCounts, *, checkpoint: str | None, after_commit: str | None = None) -> JobResult:
        """This result with one more commit counted; `after_commit` is what failed once it had completed."""
        warning = (f"commit {commit.instant} completed, then Hudi failed: {after_commit}",) if after_commit else ()
        return JobResult(
            job=self.job, instant=commit.instant, outcome=COMMITTED, operation=commit.operation,
            commits=self.commits + 1,
            rows=self.rows + commit.inserts + commit.updates + commit.deletes, inserts=self.inserts + commit.inserts,
            updates=self.updates + commit.updates, deletes=self.deletes + commit.deletes,
            files=self.files + commit.files, bytes=self.bytes + commit.bytes,
            error_table_records=self.error_table_records, checkpoint=checkpoint,
            warnings=self.warnings + warning, durations_ms=self.durations_ms,
        )

    def to_dict(self) -> dict[str, Any]:
        return {"status": OK, **asdict(self)}


@dataclass(frozen=True)
class ServiceResult:
    """What a table service's run did. `instant` is the plan or service instant it scheduled, ran or
    found; None when there was nothing to do (`reason` says why)."""

    job: str
    mode: str | None = None
    instant: str | None = None
    #: scheduled | completed | completed by another run | withdrawn (a plan that lost to a writer) |
    #: planned (a dry run) | ...
    outcome: str | None = None
    file_groups: int = 0  # in the plan
    files: int = 0  # written by the execution, or removed by a clean
    bytes: int = 0
    rows: int = 0  # records the execution wrote
    reason: str | None = None
    warnings: tuple[str, ...] = ()
    details: dict[str, Any] = field(default_factory=dict)
    durations_ms: dict[str, float] = field(default_factory=dict)
    catalog: str | None = None  # `database.table` the run synced the table to

    def to_dict(self) -> dict[str, Any]:
        return {"status": OK, **asdict(self)}


@dataclass(frozen=True)
class JobFailure:
    """Why a run failed: the exit code (2 bad input, 3 write conflict, 4 lock timeout, 5 a source that did not
    answer, 1 anything else),
    the hudi-ops error's class and its message, which names the fix."""

    job: str
    exit_code: int
    error: str
    message: str

    def to_dict(self) -> dict[str, Any]:
        return {"status": FAILED, **asdict(self)}


def report(outcome: JobResult | ServiceResult | JobFailure) -> None:
    """The job's final line, in the $HUDI_OPS_RESULT_FILE the operator gave it, then on stdout. The
    file is replaced whole, so a reader never sees half a line; failing to write it is logged, not
    raised: it must not turn a committed write into a failed job."""
    line = json.dumps(outcome.to_dict())
    if target := os.environ.get(RESULT_FILE_ENV):
        try:
            folder, name = _split(target)
            folder.write_file(name, (line + "\n").encode())
        except (OSError, HudiOpsError) as e:
            print(f"hudi_ops: could not write the result to ${RESULT_FILE_ENV} ({e})", file=sys.stderr, flush=True)
    print(line, flush=True)


def read_result_file(target: str, *, s3: S3Settings | None = None) -> str | None:
    """The line a job wrote to `target` (a path or a URI), None when it wrote none."""
    folder, name = _split(target, s3)
    try:
        return folder.read_bytes(name).decode()
    except FileNotFoundError:
        return None


def remove_result_file(target: str, *, s3: S3Settings | None = None) -> None:
    """The result file removed, if it is there."""
    folder, name = _split(target, s3)
    try:
        folder.delete_file(name)
    except FileNotFoundError:
        pass
    except HudiOpsError as e:  # the line is read: a file left behind costs a few bytes, not the result
        print(f"hudi_ops: could not remove the result file {target} ({e})", file=sys.stderr, flush=True)


def _split(target: str, s3: S3Settings | None = None) -> tuple[Storage, str]:
    head, _, name = target.rstrip("/").rpartition("/")
    return Storage.for_uri(head or "/", s3=s3), name


def parse_result_line(line: str, job: str, result_type: type[JobResult] | type[ServiceResult],
                      ) -> JobResult | ServiceResult | JobFailure | None:
    """The outcome a final line of `job` reports; None when the line is not one."""
    text = line.strip()
    if not (text.startswith("{") and text.endswith("}")):
        return None
    try:
        data = json.loads(text)
    except ValueError:
        return None
    if not isinstance(data, dict) or data.get("job") != job:
        return None
    status = data.pop("status", None)
    if status not in (OK, FAILED):
        return None
    kind = JobFailure if status == FAILED else result_type
    known = {f.name for f in fields(kind)}
    values = {k: tuple(v) if k == "warnings" else v for k, v in data.items() if k in known}
    return kind(**values)


def nothing_to_ingest(run: str | None, last: tuple[str, str] | None, position: str | None, *, committed: str,
                      idle: str, started: float) -> JobResult:
    """The result of an ingest that found nothing new. `last`: the (instant, run) of the source's latest
    checkpoint; when this run made it, another attempt of the run committed (`committed` says what)."""
    if run and last is not None and last[1] == run:
        return JobResult("ingest", instant=last[0], outcome=ALREADY_COMMITTED, checkpoint=position,
                         reason=f"run {run} committed {committed} in {last[0]} (another attempt of it); nothing "
                                "written", durations_ms=since(started))
    return JobResult("ingest", checkpoint=position, reason=f"nothing to ingest: {idle}", durations_ms=since(started))


def since(started: float) -> dict[str, float]:
    """`durations_ms` of a run that began at `started` (time.perf_counter())."""
    return {"total": round((time.perf_counter() - started) * 1000, 1)}
