"""The contract between Airflow and the Spark jobs: one typed spec per job,
which validates its values, turns into the Spark application's arguments (`to_argv()`) and back
(`from_argv()`), and reads the job's final JSON line (`parse_result()`).

The operators build specs, the Spark application parses them, tests and benchmarks use them: a
job's arguments are written down once, here.
"""

from __future__ import annotations

from collections.abc import Sequence

from hudi_ops.job_specs.arguments import JobSpec, parse_job_argv
from hudi_ops.job_specs.repairs import DedupeSpec
from hudi_ops.job_specs.results import JobFailure, JobResult, ServiceResult
from hudi_ops.job_specs.services import (
    ArchiveSpec,
    CleanSpec,
    ClusterSpec,
    CompactSpec,
    PlanServiceSpec,
    RestoreSpec,
    RollbackFailedSpec,
    SavepointSpec,
    ServiceSpec,
)
from hudi_ops.job_specs.writes import BackfillSpec, IngestSpec, WriteSpec

#: every job of the Spark application, by its name on the command line
JOBS: dict[str, type[JobSpec]] = {spec.JOB: spec for spec in (
    IngestSpec, BackfillSpec, CompactSpec, ClusterSpec, CleanSpec, ArchiveSpec, RollbackFailedSpec, SavepointSpec,
    RestoreSpec, DedupeSpec)}


def parse_argv(argv: Sequence[str]) -> JobSpec:
    """The spec of the application's arguments (the job's name first)."""
    return parse_job_argv(argv, JOBS)


__all__ = [
    "JOBS", "ArchiveSpec", "BackfillSpec", "CleanSpec", "ClusterSpec", "CompactSpec", "DedupeSpec", "IngestSpec",
    "JobFailure", "JobResult", "JobSpec", "PlanServiceSpec", "RestoreSpec", "RollbackFailedSpec", "SavepointSpec",
    "ServiceResult", "ServiceSpec", "WriteSpec", "parse_argv",
]
