"""Operators for Hudi's table services, one per service, each with a `mode`.

`schedule` tasks write a plan (Hudi takes the table's lock) and return its instant; an `execute`
task takes the plan's instant from `instant_time` or from the XCom of `plan_task_id`, so schedule and
execute can be separate tasks; with neither (or when that task planned nothing) it runs the oldest
pending plan, such as one a failed run left behind. Before spark-submit, every task asks the control plane whether there
is work (hudi_ops.read.service_work) and is skipped, in milliseconds and saying why, when there is
none. Services add no Asset event: the services DAG is triggered by the writers' events.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from hudi_ops.airflow.job_spec import hoodie_conf_args
from hudi_ops.airflow.operators import HudiSparkJobOperator
from hudi_ops.errors import InvalidInputError, TableNotFoundError
from hudi_ops.format.meta_client import MetaClient
from hudi_ops.read.pending_plans import CLUSTERING, COMPACTION, pending_cleans
from hudi_ops.read.service_work import (
    ServiceWork,
    clean_work,
    clustering_schedule_work,
    compaction_schedule_work,
    plan_execution_work,
)
from hudi_ops.spark.jobs.plan_execution import MODES


class HudiTableServiceOperator(HudiSparkJobOperator):
    """Base: one table service run in `mode` (schedule, execute, scheduleAndExecute)."""

    template_fields: Sequence[str] = (*HudiSparkJobOperator.template_fields, "mode", "instant_time")

    def __init__(self, *, mode: str = "scheduleAndExecute", instant_time: str | None = None,
                 plan_task_id: str | None = None, **kwargs: Any) -> None:
        kwargs.setdefault("retries", 2)
        super().__init__(**kwargs)
        self.mode, self.instant_time, self.plan_task_id = mode, instant_time, plan_task_id

    def plan_instant(self, context: Any) -> str | None:
        """The plan to execute: `instant_time`, else what the `plan_task_id` task scheduled."""
        if self.instant_time:
            return str(self.instant_time)
        if self.plan_task_id and self.mode == "execute":
            scheduled = context["ti"].xcom_pull(task_ids=self.plan_task_id) or {}
            return scheduled.get("instant")
        return None

    def job_arguments(self, context: Any, options: Mapping[str, str]) -> list[str]:
        if self.mode not in MODES:
            raise InvalidInputError(f"unknown mode {self.mode!r} for {self.job}; use one of {', '.join(MODES)}")
        out = [self.job, "--base-path", self.base_path, "--mode", self.mode]
        instant = self.plan_instant(context)
        if instant:
            out += ["--instant-time", instant]
        return out + hoodie_conf_args(options)

    def idle_reason(self, context: Any, options: Mapping[str, str]) -> str | None:
        try:
            meta = MetaClient.open(self.base_path)
        except TableNotFoundError:
            return f"{self.base_path} is not a Hudi table yet: nothing to serve"
        work = self.work(context, meta, options)
        return None if work.due else work.reason

    def work(self, context: Any, meta: MetaClient, options: Mapping[str, str]) -> ServiceWork:
        raise NotImplementedError


class _PlanServiceOperator(HudiTableServiceOperator):
    service = ""

    def schedule_work(self, meta: MetaClient, options: Mapping[str, str]) -> ServiceWork:
        raise NotImplementedError

    def work(self, context: Any, meta: MetaClient, options: Mapping[str, str]) -> ServiceWork:
        if self.mode != "execute":
            return self.schedule_work(meta, options)
        instant = self.plan_instant(context)
        if instant and meta.timeline().completed_instant(instant) is not None:
            return ServiceWork(False, f"{self.service} plan {instant} has completed already")
        return ServiceWork(True, f"plan {instant}") if instant else plan_execution_work(meta, self.service)


class HudiCompactionOperator(_PlanServiceOperator):
    """`compact`: Hudi's compaction of a MERGE_ON_READ table. Scheduling is due after
    `hoodie.compact.inline.max.delta.commits` deltacommits since the last compaction."""

    job, service = "compact", COMPACTION

    def schedule_work(self, meta: MetaClient, options: Mapping[str, str]) -> ServiceWork:
        return compaction_schedule_work(meta, options)


class HudiClusteringOperator(_PlanServiceOperator):
    """`cluster`: Hudi's clustering of small base files. Scheduling is due when a partition holds two
    or more base files under the plan strategy's small-file limit."""

    job, service = "cluster", CLUSTERING

    def schedule_work(self, meta: MetaClient, options: Mapping[str, str]) -> ServiceWork:
        return clustering_schedule_work(meta, options)


class HudiCleanOperator(HudiTableServiceOperator):
    """`clean` with Hudi's policy (`hoodie.cleaner.policy` and its retention key in `hoodie_conf`);
    `dry_run` reports what a clean would remove and removes nothing."""

    job = "clean"

    def __init__(self, *, dry_run: bool = False, **kwargs: Any) -> None:
        for plan_argument in ("instant_time", "plan_task_id"):
            if kwargs.get(plan_argument):
                raise InvalidInputError(f"{plan_argument} is for compaction and clustering plans; a clean plans "
                                        "and executes its own")
        super().__init__(**kwargs)
        self.dry_run = dry_run

    def job_arguments(self, context: Any, options: Mapping[str, str]) -> list[str]:
        out = super().job_arguments(context, options)
        return [*out, "--dry-run"] if self.dry_run else out

    def work(self, context: Any, meta: MetaClient, options: Mapping[str, str]) -> ServiceWork:
        if self.mode == "execute":
            pending = pending_cleans(meta.timeline())
            return ServiceWork(bool(pending), f"{len(pending)} pending clean plan(s)")
        return clean_work(meta, options)
