"""`compact`: Hudi's compaction of a MERGE_ON_READ table's log files into new base files.

Scheduling follows Hudi's trigger (`hoodie.compact.inline.trigger.strategy`, by default
`hoodie.compact.inline.max.delta.commits` deltacommits since the last compaction); execution runs
the plan with Hudi's compactor, as Hudi's HoodieCompactor utility does.
"""

from __future__ import annotations

from hudi_ops.format.meta_client import MetaClient
from hudi_ops.read.table_services import COMPACTION
from hudi_ops.spark.jobs.plan_execution import PlanService


def _refuses(meta: MetaClient) -> str | None:
    if meta.is_mor:
        return None
    return (f"{meta.base_path} is a COPY_ON_WRITE table: it has no log files to compact (compaction is for "
            "MERGE_ON_READ tables); run clustering to rewrite its small files")


COMPACT = PlanService(COMPACTION, "scheduleCompaction", "scheduleCompactionAtInstant", "compact", _refuses)
