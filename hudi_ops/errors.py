"""The one exception tree of hudi-ops: every error a user can see derives from HudiOpsError."""

from __future__ import annotations


class HudiOpsError(Exception):
    """Root of every hudi-ops error."""


class TableNotFoundError(HudiOpsError):
    """No Hudi table (no .hoodie/hoodie.properties) at the given path; `missing` says what is not there."""

    def __init__(self, base_path: str, missing: str = ".hoodie/hoodie.properties is missing") -> None:
        super().__init__(
            f"no Hudi table at {base_path!r}: {missing}; check the path, or "
            "create the table with a first write (`ingest` or `backfill` with --record-key-field)"
        )
        self.base_path = base_path


class InvalidTableError(HudiOpsError):
    """The table on storage is malformed or of a version/layout hudi-ops cannot handle."""


class InvalidInputError(HudiOpsError):
    """Bad user input: null or missing keys, schema mismatch, bad config. The message names the fix."""


class ValidationFailedError(InvalidInputError):
    """A pre-commit validator of the table refused the batch: nothing of it is visible."""


class ConfigError(InvalidInputError):
    """A hoodie.* option has a bad value or contradicts another one."""


class TimelineError(HudiOpsError):
    """The timeline is in a state that forbids the requested transition."""

    def __init__(self, message: str, *, instant: str | None = None) -> None:
        super().__init__(message)
        self.instant = instant


class InvalidInstantTimeError(InvalidInputError, TimelineError):
    """A time given by the user (as-of, incremental bounds) is not a valid instant time."""


class WriteConflictError(HudiOpsError):
    """Our instant overlaps an instant that committed first (RFC-22); nothing of ours is visible."""

    def __init__(self, instant: str, conflicting_instant: str, *, reason: str | None = None) -> None:
        self.instant = instant
        self.conflicting_instant = conflicting_instant
        why = f" ({reason})" if reason else ""
        super().__init__(
            f"write conflict: instant {instant} overlaps instant {conflicting_instant}, which committed first"
            f"{why}; nothing of instant {instant} is visible, retry the write"
        )


class ClusteringUpdateConflictError(WriteConflictError):
    """The write updates a file group that a pending clustering plan rewrites, which Hudi's default
    `hoodie.clustering.updates.strategy` (SparkRejectUpdateStrategy) refuses: retry once it ran."""

    def __init__(self, file_group: str, plan: str | None) -> None:
        self.instant, self.conflicting_instant = "?", plan or "?"
        which = f"pending clustering plan {plan}" if plan else "a pending clustering plan"
        HudiOpsError.__init__(
            self,
            f"write conflict: the write updates file group {file_group}, which {which} rewrites, and Hudi "
            "refuses updates to file groups being clustered (hoodie.clustering.updates.strategy="
            "SparkRejectUpdateStrategy); nothing of the write is visible: retry once the clustering has run",
        )


class EarlyConflictError(WriteConflictError):
    """Hudi's early conflict detection (`hoodie.write.concurrency.early.conflict.detection.enable`) found
    another writer's files in the same file groups while this write was still writing: it stopped
    before the rest of its work; nothing of it is visible."""

    def __init__(self, said: str) -> None:
        self.instant, self.conflicting_instant = "?", "?"
        HudiOpsError.__init__(
            self,
            f"write conflict found early: another writer is writing the same file groups (Hudi: {said[:200]}); "
            "this write stopped before the rest of its work and nothing of it is visible, retry the write",
        )


class WriteInFlightError(WriteConflictError):
    """A clustering met writes in flight at its commit, which Hudi 1.1.1's own prefer-writer check fails
    to order (it sorts the candidates by completion time, null while in flight, and throws a
    NullPointerException; Hudi 1.2.0 sorts them nulls last, and hudi-ops ships that fix beside its own
    1.1.1: this is met with a Hudi of the user's own). Writers come first: the clustering yields."""

    def __init__(self, instant: str, writes: tuple[str, ...]) -> None:
        self.instant, self.conflicting_instant = instant, writes[0] if writes else "?"
        HudiOpsError.__init__(
            self,
            f"clustering {instant} met write(s) in flight at its commit ({', '.join(writes) or 'since done'}), "
            "which Hudi "
            "1.1.1's PreferWriterConflictResolutionStrategy cannot order (a NullPointerException, fixed after "
            "1.1.1); writers come first, nothing of the clustering is visible",
        )


class ConcurrentJobError(HudiOpsError):
    """Another job is doing the same thing right now (executing the same plan, creating the same table):
    nothing of this job is visible; retry once it is done."""


class TableBeingCreatedError(TableNotFoundError, ConcurrentJobError):
    """hoodie.properties is there but not yet whole, and the table has no instant: a writer is creating it.
    No table yet to "is there work?" checks; to a job, another job at work on it (exit 3, retried)."""

    def __init__(self, base_path: str, detail: str) -> None:
        HudiOpsError.__init__(
            self,
            f"the Hudi table at {base_path!r} is being created: {detail}; wait for the first write to commit. "
            "If no writer is creating it, the creation died: delete its .hoodie/ folder (it holds no commit) "
            "and write again",
        )
        self.base_path = base_path


class RollbackRaceError(ConcurrentJobError):
    """Another process rolled back the same failed write first. For a job whose purpose is that rollback
    (a clean, rollback-failed) the work is done: it reports success with a warning."""


class LockAcquisitionError(HudiOpsError):
    """The table lock could not be taken in time."""


class LockHeldError(LockAcquisitionError):
    """Another process held the lock for the whole wait (ZooKeeper answered throughout)."""


class SourceUnavailableError(HudiOpsError):
    """A source (a Kafka broker, an object store) did not answer just now: the run is retried."""


class CatalogSyncError(HudiOpsError):
    """A commit completed, then its sync to the catalog (a Hive Metastore) failed: the table is as committed
    (the job reports it under `warnings`), the catalog lags until the next sync compares it whole."""


class JobEndedError(HudiOpsError):
    """The driver ended itself because spark-submit or the Airflow task that started it is gone: nobody
    waits for its outcome, and a retry of the task may already be at work. Nothing it had not committed
    is visible."""


class TableServiceError(HudiOpsError):
    """A table service (clean, compact, cluster, archive, rollback) failed."""


class StorageError(HudiOpsError):
    """A file operation on the table's storage failed."""


def is_write_conflict(error_name: str) -> bool:
    """Whether a job's reported error class (by name) is a write conflict, of any kind."""
    kinds, found = [WriteConflictError], set()
    while kinds:
        kind = kinds.pop()
        found.add(kind.__name__)
        kinds.extend(kind.__subclasses__())
    return error_name in found


EXIT_OK, EXIT_FAILED, EXIT_BAD_INPUT, EXIT_CONFLICT, EXIT_LOCK_TIMEOUT, EXIT_SOURCE_UNAVAILABLE = 0, 1, 2, 3, 4, 5
#: not an error: `hudi-ops check duplicates` found keys present more than once, for a scheduler to alert on
EXIT_DUPLICATES = 6


def exit_code(error: HudiOpsError) -> int:
    """2 bad input, 3 write conflict or concurrent job (retryable), 4 lock timeout (retryable), 5 a source
    that did not answer (retryable), 1 anything else."""
    if isinstance(error, WriteConflictError | ConcurrentJobError):
        return EXIT_CONFLICT
    if isinstance(error, LockAcquisitionError):
        return EXIT_LOCK_TIMEOUT
    if isinstance(error, SourceUnavailableError):
        return EXIT_SOURCE_UNAVAILABLE
    if isinstance(error, InvalidInputError | TableNotFoundError):
        return EXIT_BAD_INPUT
    return EXIT_FAILED
