"""`cluster`: Hudi's clustering, which rewrites small base files into fewer, larger (and optionally
sorted) ones. The plan follows Hudi's clustering settings (`hoodie.clustering.plan.strategy.*`);
execution runs it with Hudi's strategy, as Hudi's HoodieClusteringJob does."""

from __future__ import annotations

from hudi_ops.read.table_services import CLUSTERING
from hudi_ops.spark.jobs.plan_execution import PlanService

CLUSTER = PlanService(CLUSTERING, "scheduleClustering", "scheduleClusteringAtInstant", "cluster",
                      withdraw_method="purgePendingClustering")
