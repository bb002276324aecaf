"""The repairs' specs: `dedupe`, which leaves each key of a table once per partition (under a global index, once)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from hudi_ops.errors import InvalidInputError
from hudi_ops.job_specs.arguments import SWITCH, JobSpec, argument


@dataclass(frozen=True, kw_only=True)
class DedupeSpec(JobSpec):
    """`dedupe`: each key held more than once within a partition (under a global index, in the table) left once,
    its latest version by the table's ordering field (then the latest commit), the partitions holding its older
    versions rewritten by Hudi's insert_overwrite, with the table's lock at its commit (hudi_ops.spark.jobs.dedupe)."""

    JOB: ClassVar[str] = "dedupe"

    base_path: str = argument("--target-base-path", "the table's folder or URI")
    partitions: str | None = argument("--partitions", "the partition paths to repair, comma separated, as `hudi-ops "
                                      "check duplicates` names them (default: every partition)", default=None)
    dry_run: bool = argument("--dry-run", "report what the repair would remove; write nothing", default=False,
                             kind=SWITCH)

    def validate(self) -> None:
        if self.partitions is not None and not self.partition_paths():
            raise InvalidInputError("dedupe: --partitions names no partition; give partition paths, comma separated, "
                                    "or leave it out for every partition")

    def partition_paths(self) -> tuple[str, ...] | None:
        """The partitions to repair; None: every partition."""
        if self.partitions is None:
            return None
        return tuple(p.strip() for p in self.partitions.split(",") if p.strip())
