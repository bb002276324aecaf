"""Hudi's table services as hudi-ops runs them, in one registry: each service's name, its job (the spec),
its checks for work (hudi_ops.read.service_work) and what a writer sets to leave it to that job.

A service is named as Hudi names its plans' action (compaction, clustering, clean; archive has none),
which is also its section of the tables config; its job as the Spark application's command (compact,
cluster, clean, archive: the spec's JOB). The operators, the Spark jobs, the fleet's scheduler and the
control plane's measure of a table's need take them from here.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from hudi_ops.errors import InvalidInputError
from hudi_ops.format.instant import Action
from hudi_ops.format.meta_client import MetaClient
from hudi_ops.job_specs import ArchiveSpec, CleanSpec, ClusterSpec, CompactSpec, PlanServiceSpec, ServiceSpec
from hudi_ops.options.keys import ArchivalConfig, CleanConfig, ClusteringConfig, CompactionConfig
from hudi_ops.read.service_work import (
    ServiceWork,
    archive_work,
    clean_execution_work,
    clean_work,
    clustering_schedule_work,
    compaction_schedule_work,
    plan_execution_work,
)

#: a check for work on the table (its meta client) with the service's options, at a time (None: now)
WorkCheck = Callable[[MetaClient, Mapping[str, str], dt.datetime | None], ServiceWork]


@dataclass(frozen=True)
class TableService:
    """One of Hudi's table services: what runs it and what tells whether it has work."""

    name: str
    spec: type[ServiceSpec]
    #: is a new run due: a plan to schedule (compaction, clustering), a clean's or an archival's run
    work: WorkCheck
    #: what a writer sets to leave the service to its own job: the tables config's part of a job's options
    #: (hudi_ops.options.job_defaults), which the DAG factory adds to the writers'
    inline_off: Mapping[str, str]
    #: what an `execute` run finds to do: the plans left pending; None: the service has no modes
    execution: Callable[[MetaClient], ServiceWork] | None = None

    @property
    def job(self) -> str:
        return self.spec.JOB

    @property
    def plans(self) -> bool:
        """Whether its plans wait on the timeline for an executor (compaction, clustering)."""
        return issubclass(self.spec, PlanServiceSpec)


COMPACTION = TableService(
    Action.COMPACTION, CompactSpec, lambda meta, options, _now: compaction_schedule_work(meta, options),
    {CompactionConfig.INLINE.name: "false", CompactionConfig.SCHEDULE_INLINE.name: "false"},
    lambda meta: plan_execution_work(meta, Action.COMPACTION))
CLUSTERING = TableService(
    Action.CLUSTERING, ClusterSpec, lambda meta, options, _now: clustering_schedule_work(meta, options),
    {ClusteringConfig.INLINE.name: "false", ClusteringConfig.SCHEDULE_INLINE.name: "false"},
    lambda meta: plan_execution_work(meta, Action.CLUSTERING))
CLEAN = TableService(Action.CLEAN, CleanSpec, clean_work, {CleanConfig.AUTOMATIC.name: "false"}, clean_execution_work)
# archival deletes instant files that concurrent jobs may be reading: in one place, its own job
ARCHIVE = TableService("archive", ArchiveSpec, lambda meta, options, _now: archive_work(meta, options),
                       {ArchivalConfig.AUTOMATIC.name: "false"})

#: every service by its name, in the order a table's services run (its services DAG's, a tick's)
SERVICES: Mapping[str, TableService] = {s.name: s for s in (COMPACTION, CLUSTERING, CLEAN, ARCHIVE)}


def table_service(name: str) -> TableService:
    """The service named `name`; InvalidInputError for any other name."""
    if name not in SERVICES:
        raise InvalidInputError(f"unknown service {name!r}; use one of {', '.join(SERVICES)}")
    return SERVICES[name]


def inline_off(names: Iterable[str]) -> dict[str, str]:
    """The options that leave the services named to their own jobs."""
    return {key: off for name in names for key, off in SERVICES[name].inline_off.items()}
