"""`cluster`: Hudi's clustering, which rewrites small base files into fewer, larger (and optionally
sorted) ones. The plan follows Hudi's clustering settings (`hoodie.clustering.plan.strategy.*`);
execution runs it with Hudi's strategy, as Hudi's HoodieClusteringJob does."""

from __future__ import annotations

from hudi_ops.spark.jobs.plan_execution import PlanService
from hudi_ops.spark.jobs.write_client import WriteClient


def _schedule(client: WriteClient, instant: str | None) -> str | None:
    if instant is not None:
        return instant if client.java.scheduleClusteringAtInstant(instant, client.none()) else None
    scheduled = client.java.scheduleClustering(client.none())
    return scheduled.get() if scheduled.isPresent() else None


def _execute(client: WriteClient, instant: str) -> None:
    client.java.cluster(instant, True)


CLUSTERING = PlanService("cluster", "clustering", _schedule, _execute)
