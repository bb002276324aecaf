"""Schedule and execute a plan-based table service (compaction, clustering) with Hudi's write client.

`schedule` writes the plan under the table's lock (Hudi takes it) and reports its instant, or None
when Hudi finds nothing to plan. `execute` runs a given plan, or the oldest pending one, holding the
plan's own ZooKeeper lock throughout, so that a second executor of the same plan waits and then
reports what the first did instead of running it again. A clustering that loses to a writer at its
commit yields: its plan is withdrawn (hudi_ops.options.occ, ingestion first).
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from hudi_ops.errors import InvalidInputError, TableServiceError, WriteConflictError
from hudi_ops.format.instant import Action, parse_instant_time
from hudi_ops.format.meta_client import MetaClient
from hudi_ops.job_specs import PlanServiceSpec
from hudi_ops.job_specs.results import ServiceResult, since
from hudi_ops.locks.job_locks import plan_lock
from hudi_ops.options.occ import has_zookeeper_lock
from hudi_ops.read.pending_plans import PendingPlan, pending_plans
from hudi_ops.read.table_overview import ROLLED_BACK, commit_stats_of, instant_spans
from hudi_ops.read.table_services import TableService
from hudi_ops.spark.jobs.write_client import WriteClient, write_client


@dataclass(frozen=True)
class PlanService:
    """A plan-based service (hudi_ops.read.table_services) and the write client's methods for it."""

    table_service: TableService  # compaction | clustering
    schedule_method: str  # (extra metadata) -> Option<instant>
    schedule_at_method: str  # (instant, extra metadata) -> whether it planned
    execute_method: str  # (instant, complete) -> the write metadata
    #: the table, when the service cannot run on it: the message names the fix
    refuses: Callable[[MetaClient], str | None] = lambda _meta: None
    #: the write client's method that removes a plan whose execution lost to a writer at its commit,
    #: so that the next schedule plans again; None: the plan must run (a compaction's: writes since
    #: went to the slice it creates)
    withdraw_method: str | None = None

    @property
    def name(self) -> str:
        return self.table_service.name

    def schedule(self, client: WriteClient, instant: str | None) -> str | None:
        """The scheduled plan's instant; None when Hudi finds nothing to plan."""
        if instant is not None:
            return instant if getattr(client.java, self.schedule_at_method)(instant, client.none()) else None
        scheduled = getattr(client.java, self.schedule_method)(client.none())
        return scheduled.get() if scheduled.isPresent() else None

    def execute(self, client: WriteClient, instant: str) -> None:
        """Run the plan and complete its instant."""
        getattr(client.java, self.execute_method)(instant, True)


def run(service: PlanService, spec: PlanServiceSpec, options: dict[str, str],
        spark: Callable[[], Any]) -> ServiceResult:
    started = time.perf_counter()
    meta = MetaClient.open(spec.base_path)
    refusal = service.refuses(meta)
    if refusal:
        raise InvalidInputError(refusal)
    instant = spec.instant_time
    if spec.mode in ("schedule", "scheduleAndExecute"):
        if instant is not None:
            _check_new_instant(meta, instant)
        with write_client(spark(), meta, options) as client:
            instant = service.schedule(client, instant)
        meta = meta.reload()  # with the plan Hudi made
        if instant is None:
            return ServiceResult(spec.JOB, spec.mode, reason=f"Hudi found nothing to plan for {service.name}",
                                 durations_ms=since(started))
        if spec.mode == "schedule":
            plan = _pending(meta, service, instant)
            return ServiceResult(spec.JOB, spec.mode, instant, "scheduled",
                                 file_groups=len(plan.file_groups) if plan else 0, durations_ms=since(started))
    return _execute(service, meta, options, spark, instant, spec, started)


def _execute(service: PlanService, meta: MetaClient, options: dict[str, str], spark: Callable[[], Any],
             instant: str | None, spec: PlanServiceSpec, started: float) -> ServiceResult:
    plans = pending_plans(meta.timeline(), service.name)
    if instant is None:
        if not plans:
            return ServiceResult(spec.JOB, spec.mode, reason=f"no pending {service.name} plan",
                                 durations_ms=since(started))
        instant = plans[0].instant
    elif instant not in {p.instant for p in plans}:
        if meta.timeline().completed_instant(instant) is not None:
            return _outcome(service, meta, spec, instant, "already completed", started)
        if (withdrawn := _withdrawn(service, meta, spec, instant, started)) is not None:
            return withdrawn
        pending = ", ".join(p.instant for p in plans) or "none"
        raise InvalidInputError(f"{meta.base_path} has no pending {service.name} plan {instant} (pending: "
                                f"{pending}); pass one of them to --instant-time, or none for the oldest")
    plan = next(p for p in plans if p.instant == instant) if instant in {p.instant for p in plans} else None
    warnings: tuple[str, ...] = ()
    if has_zookeeper_lock(options):
        guard: contextlib.AbstractContextManager[Any] = plan_lock(
            options, meta.properties.table_name, service.name, instant, spec.wait_seconds)
    else:
        guard = contextlib.nullcontext()
        warnings = (f"no ZooKeeper lock is configured: nothing stops another executor of {service.name} "
                    f"plan {instant} from running it at the same time",)
    with guard as held:
        meta = meta.reload()  # as the executor we may have waited for left it
        if meta.timeline().completed_instant(instant) is not None:  # the executor we waited for ran it
            return _outcome(service, meta, spec, instant, "completed by another run", started, plan, warnings)
        if (withdrawn := _withdrawn(service, meta, spec, instant, started, warnings)) is not None:
            return withdrawn  # the executor we waited for lost it to a writer
        try:
            with write_client(spark(), meta, options) as client:
                if held is not None:  # a ZooKeeper session lost while Spark started would let another executor in
                    held.provider.assert_held()
                service.execute(client, instant)
        except WriteConflictError as conflict:
            if service.withdraw_method is None:
                raise
            after = meta.reload()
            if after.timeline().completed_instant(instant) is not None:  # it failed after completing
                return _outcome(service, after, spec, instant, "completed", started, plan, warnings)
            return _withdraw(service, after, options, spark, spec, instant, conflict, started, warnings, held)
        return _outcome(service, meta, spec, instant, "completed", started, plan, warnings)


def _withdraw(service: PlanService, meta: MetaClient, options: dict[str, str], spark: Callable[[], Any],
              spec: PlanServiceSpec, instant: str, conflict: WriteConflictError, started: float,
              warnings: tuple[str, ...], held: Any) -> ServiceResult:
    """Ingestion first: a writer updated the plan's file groups after it was made (Hudi's
    PreferWriter check at the commit); the plan is rolled back and removed, under the table's lock."""
    with write_client(spark(), meta, options) as client:
        if held is not None:  # the plan is ours alone: a lapsed session may have let another executor run it
            held.provider.assert_held()
        getattr(client.java, service.withdraw_method)(instant)
    withdrawn = _withdrawn(service, meta.reload(), spec, instant, started, warnings, conflict)
    if withdrawn is None:
        raise TableServiceError(f"{service.name} {instant} of {meta.base_path} lost to a writer ({conflict}), "
                                "and Hudi did not remove its plan; see the job's log")
    return withdrawn


def _withdrawn(service: PlanService, meta: MetaClient, spec: PlanServiceSpec, instant: str, started: float,
               warnings: tuple[str, ...] = (), conflict: WriteConflictError | None = None) -> ServiceResult | None:
    """The result of a plan a completed rollback removed; None when none did."""
    timeline = meta.timeline()
    if service.withdraw_method is None or any(p.instant == instant for p in pending_plans(timeline, service.name)):
        return None
    # a rollback that does not record its target's action takes the table's: not a plan's
    span = next((s for s in instant_spans(timeline, meta.commit_action) if s.requested_time == instant), None)
    if span is None or span.status != ROLLED_BACK or span.action not in (Action.CLUSTERING, Action.REPLACE_COMMIT):
        return None
    why = (f": it lost to a writer at its commit ({conflict}), and writers come first" if conflict is not None
           else " (a clustering that loses to a writer at its commit withdraws its plan)")
    return ServiceResult(spec.JOB, spec.mode, instant, "withdrawn",
                         reason=f"{service.name} plan {instant} was rolled back and removed at "
                                f"{span.rolled_back_by}{why}; the next schedule plans again",
                         warnings=warnings, durations_ms=since(started))


def _check_new_instant(meta: MetaClient, instant: str) -> None:
    """A plan's instant must be a valid time after every instant of the table (Hudi's rule)."""
    parse_instant_time(instant)  # names the format when it is not one
    newest = max((i.requested_time for i in meta.timeline()), default="")
    if instant <= newest:
        raise InvalidInputError(f"--instant-time {instant} is not after the table's newest instant {newest}; "
                                "give a later time, or none to let Hudi choose")


def _pending(meta: MetaClient, service: PlanService, instant: str) -> PendingPlan | None:
    return next((p for p in pending_plans(meta.timeline(), service.name) if p.instant == instant), None)


def _outcome(service: PlanService, meta: MetaClient, spec: PlanServiceSpec, instant: str, outcome: str,
             started: float, plan: PendingPlan | None = None, warnings: tuple[str, ...] = ()) -> ServiceResult:
    timeline = meta.reload().timeline()  # after the execution
    done = timeline.completed_instant(instant)
    if done is None:
        raise TableServiceError(f"Hudi returned from {service.name} {instant} of {meta.base_path}, "
                                "but the instant has not completed; see the job's log")
    stats = commit_stats_of(timeline, done)
    return ServiceResult(spec.JOB, spec.mode, instant, outcome,
                         file_groups=len(plan.file_groups) if plan else stats.files, files=stats.files,
                         bytes=stats.bytes, rows=stats.writes, warnings=warnings, durations_ms=since(started))
