"""The table services' specs, with the flag names of Hudi's HoodieCompactor, HoodieClusteringJob and
HoodieCleaner where they have one."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from hudi_ops.errors import InvalidInputError
from hudi_ops.job_specs.arguments import SECONDS, SWITCH, JobSpec, argument

SCHEDULE, EXECUTE, SCHEDULE_AND_EXECUTE = "schedule", "execute", "scheduleAndExecute"
MODES = (SCHEDULE, EXECUTE, SCHEDULE_AND_EXECUTE)
#: how long a second executor of a plan waits for the first by default: a long compaction's length
DEFAULT_PLAN_WAIT_S = 3600.0


@dataclass(frozen=True, kw_only=True)
class ServiceSpec(JobSpec):
    """Base of the table services: one of Hudi's services on an existing table."""

    base_path: str = argument("--base-path", "the table's folder or URI")


@dataclass(frozen=True, kw_only=True)
class ModeSpec(ServiceSpec):
    """A service that plans and executes: `schedule` plans, `execute` runs a plan, `scheduleAndExecute` both."""

    mode: str = argument("--mode", "what to do", default=SCHEDULE_AND_EXECUTE, choices=MODES)


@dataclass(frozen=True, kw_only=True)
class PlanServiceSpec(ModeSpec):
    """A service whose plans wait on the timeline for an executor: compaction and clustering."""

    instant_time: str | None = argument(
        "--instant-time", "schedule: the plan's instant; execute: the plan to run (default: the oldest pending)",
        default=None)
    wait_seconds: float = argument("--wait-seconds", "how long to wait while another run executes the same plan",
                                   default=DEFAULT_PLAN_WAIT_S, kind=SECONDS)


@dataclass(frozen=True, kw_only=True)
class CompactSpec(PlanServiceSpec):
    """`compact`: Hudi's compaction of a MERGE_ON_READ table's log files into base files."""

    JOB: ClassVar[str] = "compact"


@dataclass(frozen=True, kw_only=True)
class ClusterSpec(PlanServiceSpec):
    """`cluster`: Hudi's clustering of small base files into fewer, larger ones."""

    JOB: ClassVar[str] = "cluster"


@dataclass(frozen=True, kw_only=True)
class CleanSpec(ModeSpec):
    """`clean`: Hudi's cleaner, by `hoodie.cleaner.policy` and its retention key."""

    JOB: ClassVar[str] = "clean"

    dry_run: bool = argument("--dry-run", "report what a clean would remove; remove nothing", default=False,
                             kind=SWITCH)


@dataclass(frozen=True, kw_only=True)
class ArchiveSpec(ServiceSpec):
    """`archive`: Hudi's archiver moves old instants to the archived timeline."""

    JOB: ClassVar[str] = "archive"


@dataclass(frozen=True, kw_only=True)
class RollbackFailedSpec(ServiceSpec):
    """`rollback-failed`: Hudi rolls back the failed writes whose heartbeat expired."""

    JOB: ClassVar[str] = "rollback-failed"


@dataclass(frozen=True, kw_only=True)
class SavepointSpec(ServiceSpec):
    """`savepoint`: keep a commit's file slices from the cleaner and the archiver; or `--delete T`."""

    JOB: ClassVar[str] = "savepoint"

    instant_time: str | None = argument("--instant-time", "the completed commit to savepoint (default: the latest)",
                                        default=None)
    delete: str | None = argument("--delete", "delete the savepoint at T instead", default=None, metavar="T")
    comment: str | None = argument("--comment", "kept with the savepoint", default=None)

    def validate(self) -> None:
        if self.delete is not None and self.instant_time is not None:
            raise InvalidInputError("savepoint: give --instant-time (create) or --delete (delete), not both")


@dataclass(frozen=True, kw_only=True)
class RestoreSpec(ServiceSpec):
    """`restore`: the table back to a savepoint, every later instant rolled back."""

    JOB: ClassVar[str] = "restore"

    savepoint: str = argument("--savepoint", "the savepoint to restore the table to", metavar="T")
