"""Operators for Hudi's table services, one per service.

Compaction, clustering and clean run in a `mode`: `schedule` tasks write a plan (Hudi takes the
table's lock) and return its instant; an `execute` task takes the plan's instant from `instant_time`
or from the XCom of `plan_task_id`, so schedule and execute can be separate tasks; with neither (or
when that task planned nothing) it runs the oldest pending plan, such as one a failed run left
behind. Archive, savepoint and restore have no plan. Before spark-submit, every task asks the control
plane whether there is work (the registry's checks, hudi_ops.read.table_services) and is skipped, in
milliseconds and saying why, when there is none. Services add no Asset event: the services DAG is
triggered by the writers' events."""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from typing import Any

from hudi_ops.airflow import metrics
from hudi_ops.airflow.operators.spark_jobs import FoundWork, HudiSparkJobOperator
from hudi_ops.errors import InvalidInputError, TableNotFoundError
from hudi_ops.format.meta_client import MetaClient
from hudi_ops.job_specs import JobSpec, PlanServiceSpec, RestoreSpec, SavepointSpec, ServiceSpec
from hudi_ops.job_specs.services import EXECUTE, ModeSpec
from hudi_ops.read.savepoints import require_savepoint, savepointed
from hudi_ops.read.service_work import ServiceWork
from hudi_ops.read.table_need import measure
from hudi_ops.read.table_services import ARCHIVE, CLEAN, CLUSTERING, COMPACTION, TableService, table_service

#: a service's tries after its first, unless its task says otherwise
SERVICE_RETRIES = 2


class HudiTableServiceOperator(HudiSparkJobOperator):
    """Base: one of Hudi's table services on the table, skipped when the control plane finds no work."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("retries", SERVICE_RETRIES)
        super().__init__(**kwargs)

    spec_type: type[ServiceSpec] = ServiceSpec

    def job_spec(self, context: Any, options: Mapping[str, str]) -> ServiceSpec:
        return self.spec_type(base_path=self.base_path, hoodie_conf=options, **self.spec_fields(context))

    def spec_fields(self, context: Any) -> dict[str, Any]:
        """The spec's own fields besides the table and its options."""
        return {}

    def find_work(self, context: Any, spec: JobSpec) -> FoundWork:
        try:
            meta = MetaClient.open(self.base_path, s3=self.s3)
        except TableNotFoundError:
            return FoundWork(f"{self.base_path} is not a Hudi table yet: nothing to serve")
        self._measured(meta)
        work = self.work(context, meta, spec.hoodie_conf)
        return FoundWork(None if work.due else work.reason)

    def work(self, context: Any, meta: MetaClient, options: Mapping[str, str]) -> ServiceWork:
        raise NotImplementedError

    def _measured(self, meta: MetaClient) -> None:
        """The table's gauges (hudi_ops.airflow.metrics), from the look the check for work takes anyway
        (asking no service's verdict: small files are those under Hudi's default limit), and when its
        ingest last committed; a table that cannot be measured is the check's to report."""
        try:
            need = measure(meta, {}, freshness=True)
        except Exception as e:
            self.log.warning("the table's metrics were not measured: %s: %s", type(e).__name__, e)
            return
        metrics.table_measured(self.table_name, need, now=dt.datetime.now(dt.UTC))


class _RegisteredServiceOperator(HudiTableServiceOperator):
    """One of the registry's services (hudi_ops.read.table_services), named by `service`: its job, its check
    for work."""

    service = ""

    def __init__(self, **kwargs: Any) -> None:
        self.spec_type = self.table_service.spec  # before the base's init, which names the job after it
        super().__init__(**kwargs)

    @property
    def table_service(self) -> TableService:
        return table_service(self.service)

    def work(self, context: Any, meta: MetaClient, options: Mapping[str, str]) -> ServiceWork:
        return self.table_service.work(meta, options, None)


class _ModeServiceOperator(_RegisteredServiceOperator):
    """A service that plans and executes, in `mode` (schedule, execute, scheduleAndExecute); one with plans
    (compaction, clustering) executes the plan at `instant_time`, or the one `plan_task_id` scheduled."""

    template_fields: Sequence[str] = (*HudiSparkJobOperator.template_fields, "mode", "instant_time")

    def __init__(self, *, mode: str = "scheduleAndExecute", instant_time: str | None = None,
                 plan_task_id: str | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.mode, self.instant_time, self.plan_task_id = mode, instant_time, plan_task_id

    def plan_instant(self, context: Any) -> str | None:
        """The plan to execute: `instant_time`, else what the `plan_task_id` task scheduled; None for a
        service without plans."""
        if not self.table_service.plans:
            return None
        if self.instant_time:
            return str(self.instant_time)
        if self.plan_task_id and self.mode == EXECUTE:
            scheduled = context["ti"].xcom_pull(task_ids=self.plan_task_id) or {}
            return scheduled.get("instant")
        return None

    def spec_fields(self, context: Any) -> dict[str, Any]:
        """The mode, and the plan, of a spec that takes them (archive's takes neither)."""
        spec = self.table_service.spec
        return {**({"mode": self.mode} if issubclass(spec, ModeSpec) else {}),
                **({"instant_time": self.plan_instant(context)} if issubclass(spec, PlanServiceSpec) else {})}

    def work(self, context: Any, meta: MetaClient, options: Mapping[str, str]) -> ServiceWork:
        execution = self.table_service.execution
        if self.mode != EXECUTE or execution is None:
            return super().work(context, meta, options)
        instant = self.plan_instant(context)
        if not instant:
            return execution(meta)
        if meta.timeline().completed_instant(instant) is not None:
            return ServiceWork(False, f"{self.service} plan {instant} has completed already")
        return ServiceWork(True, f"plan {instant}")


class HudiCompactionOperator(_ModeServiceOperator):
    """`compact`: Hudi's compaction of a MERGE_ON_READ table. Scheduling is due after
    `hoodie.compact.inline.max.delta.commits` deltacommits since the last compaction."""

    service = COMPACTION.name


class HudiClusteringOperator(_ModeServiceOperator):
    """`cluster`: Hudi's clustering of small base files. Scheduling is due when a partition holds two
    or more base files under the plan strategy's small-file limit."""

    service = CLUSTERING.name


class HudiCleanOperator(_ModeServiceOperator):
    """`clean` with Hudi's policy (`hoodie.cleaner.policy` and its retention key in `hoodie_conf`);
    `dry_run` reports what a clean would remove and removes nothing."""

    service = CLEAN.name

    def __init__(self, *, dry_run: bool = False, **kwargs: Any) -> None:
        for plan_argument in ("instant_time", "plan_task_id"):
            if kwargs.get(plan_argument):
                raise InvalidInputError(f"{plan_argument} is for compaction and clustering plans; a clean plans "
                                        "and executes its own")
        super().__init__(**kwargs)
        self.dry_run = dry_run

    def spec_fields(self, context: Any) -> dict[str, Any]:
        return {**super().spec_fields(context), "dry_run": self.dry_run}


class HudiArchiveOperator(_RegisteredServiceOperator):
    """`archive`: Hudi's archiver moves old instants to the archived timeline. Due when more than
    `hoodie.keep.max.commits` completed commits are active."""

    service = ARCHIVE.name


class HudiSavepointOperator(HudiTableServiceOperator):
    """`savepoint`: keeps a commit (`instant_time`, default the latest) from the cleaner and the
    archiver so the table can be restored to it; `delete=True` removes the savepoint at `instant_time`."""

    spec_type = SavepointSpec
    template_fields: Sequence[str] = (*HudiSparkJobOperator.template_fields, "instant_time", "comment")

    def __init__(self, *, instant_time: str | None = None, delete: bool = False, comment: str | None = None,
                 **kwargs: Any) -> None:
        if delete and not instant_time:
            raise InvalidInputError("delete=True needs the savepoint's instant_time")
        super().__init__(**kwargs)
        self.instant_time, self.delete, self.comment = instant_time, delete, comment

    def spec_fields(self, context: Any) -> dict[str, Any]:
        if self.delete:
            return {"delete": self.instant_time}
        return {"instant_time": self.instant_time or None, "comment": self.comment or None}

    def work(self, context: Any, meta: MetaClient, options: Mapping[str, str]) -> ServiceWork:
        savepoints = savepointed(meta)
        if self.delete and str(self.instant_time) not in savepoints:
            return ServiceWork(False, f"no savepoint {self.instant_time} to delete")
        if not self.delete and self.instant_time and str(self.instant_time) in savepoints:
            return ServiceWork(False, f"{self.instant_time} is savepointed already")
        return ServiceWork(True, "delete" if self.delete else "create")


class HudiRestoreOperator(HudiTableServiceOperator):
    """`restore`: the table back to the savepoint `savepoint`, every later instant rolled back. The
    table's writers must be stopped first (the restore DAG pauses them); a missing savepoint fails the
    task before Spark starts, without retries."""

    spec_type = RestoreSpec
    template_fields: Sequence[str] = (*HudiSparkJobOperator.template_fields, "savepoint")

    def __init__(self, *, savepoint: str, **kwargs: Any) -> None:
        kwargs.setdefault("retries", 0)  # a failed restore is for a person to look at
        super().__init__(**kwargs)
        self.savepoint = savepoint

    def spec_fields(self, context: Any) -> dict[str, Any]:
        return {"savepoint": self.savepoint}

    def work(self, context: Any, meta: MetaClient, options: Mapping[str, str]) -> ServiceWork:
        require_savepoint(meta, str(self.savepoint))
        return ServiceWork(True, f"restore to {self.savepoint}")


class HudiServiceOperator(_ModeServiceOperator):
    """Any of compaction, clustering, clean and archive, named by `service`: one class, so that a services
    group maps one task over the (table, service) pairs its tick picks (hudi_ops.airflow.dag_factory.services_group).
    Each behaves as its own operator above: the same job, the same check for work. A compaction or
    clustering runs in `scheduleAndExecute` mode, or `execute` for a plan left pending."""

    template_fields: Sequence[str] = (*_ModeServiceOperator.template_fields, "service")

    def __init__(self, *, service: str, **kwargs: Any) -> None:
        self.service = service  # before the base's init, which refuses an unknown one
        super().__init__(**kwargs)
