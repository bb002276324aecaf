"""DAGs from a tables config (YAML, hudi_ops.airflow.dag_factory.tables_config): per table an ingest DAG, a
parameterised backfill DAG, a services DAG and a restore DAG, as its sections ask.

    tables:
      trips:
        base_path: /data/hudi/trips
        record_key: uuid
        partition_field: city          # optional
        ordering_field: ts             # optional
        hoodie_conf: {hoodie.index.type: SIMPLE}
        table_type: MERGE_ON_READ      # optional: the table's own, COPY_ON_WRITE for a new table
        ingest:   {source_path: /landing/trips, source_format: parquet, schedule: "*/10 * * * *"}
        backfill: {source_path: /history/trips, max_active_runs: 4,
                   spark_conf: {spark.cores.max: "2"}}   # optional: this DAG's Spark over the table's
        restore: {wait_timeout_minutes: 60}   # optional: the hudi_restore__<table> DAG's settings
        services:                      # optional: a hudi_services__<table> DAG
          schedule: "@hourly"          # also triggered by every commit of the table's writers
          compaction: {hoodie.compact.inline.max.delta.commits: "5"}      # MERGE_ON_READ only
          clustering: {hoodie.clustering.plan.strategy.small.file.limit: "104857600"}
          clean: {hoodie.cleaner.policy: KEEP_LATEST_COMMITS, hoodie.cleaner.commits.retained: "10"}
          archive: {hoodie.keep.max.commits: "30"}  # optional: with any service, the DAG archives last
    defaults: {spark_conn_id: spark_default, zookeeper_conn_id: hudi_zookeeper_default,
               airflow_api_conn_id: hudi_ops_airflow_api, spark_conf: {...}}

Every DAG of a table uses the same ZooKeeper connection, hence the same lock. Ingest runs one at
a time; backfill runs may run side by side: Airflow backfills (`airflow backfill create`, a run per
day of a daily timetable that schedules nothing by itself) or manual runs with a window (Params
validated by JSON schema). The other DAGs refuse Airflow backfills, their description naming the
backfill DAG. The
services DAG schedules and executes each service as separate tasks, one task at a time and one run at
a time (nothing to set up in Airflow), and the table's writers then leave those
services to it instead of running them inline; it also archives (after the others), and nothing
else does: archival deletes instant files that a concurrent job may be reading. A
`hudi_restore__<table>` DAG (triggered with the savepoint as a Param) pauses the table's writer
DAGs through Airflow's REST API (connection `airflow_api_conn_id`), waits for their runs and writes
to end, restores, and unpauses them.

A table whose `services.group` names one of `services_groups` has no services DAG: its services run in
the group's `hudi_services_group__<group>` DAG (hudi_ops.airflow.dag_factory.services_group), at most the group's
budget of jobs at once across its tables, picked each tick by the group's policy.
"""

from __future__ import annotations

import copy
import functools
import logging
import zlib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any

import attrs
from airflow.sdk import DAG, AssetOrTimeSchedule, CronTriggerTimetable, Param, ParamsDict, task
from airflow.utils.types import DagRunType

from hudi_ops.airflow.dag_factory.freshness import freshness_deadline
from hudi_ops.airflow.dag_factory.services_group import group_dag_id, plan_group_tick
from hudi_ops.airflow.dag_factory.tables_config import (
    ServicesConfig,
    ServicesGroupConfig,
    SparkSection,
    TableConfig,
    TablesConfig,
    parse_tables_config,
    read_tables_config,
)
from hudi_ops.airflow.operators.spark_jobs import RETRY_DEFAULTS, HudiBackfillOperator, HudiIngestOperator, table_asset
from hudi_ops.airflow.operators.table_services import (
    SERVICE_RETRIES,
    HudiArchiveOperator,
    HudiCleanOperator,
    HudiClusteringOperator,
    HudiCompactionOperator,
    HudiRestoreOperator,
    HudiServiceOperator,
)
from hudi_ops.airflow.operators.writer_pause import PauseWritersOperator, UnpauseWritersOperator, WritersIdleSensor
from hudi_ops.airflow.timetables.daily_backfill import DailyBackfillTimetable
from hudi_ops.job_specs.writes import BACKFILL_OPERATIONS, SOURCE_FORMATS
from hudi_ops.options.keys import WriteConfig
from hudi_ops.read.table_services import ARCHIVE, CLEAN, CLUSTERING, COMPACTION, inline_off

log = logging.getLogger(__name__)
PARALLELISM_KEYS = tuple(key.name for key in WriteConfig.SHUFFLE_PARALLELISM)


INGEST_DAG_PREFIX, BACKFILL_DAG_PREFIX, SERVICES_DAG_PREFIX, RESTORE_DAG_PREFIX = (
    "hudi_ingest__", "hudi_backfill__", "hudi_services__", "hudi_restore__")
DEFAULT_PARALLELISM = 0  # Hudi's choice, from the input
#: Airflow backfills go to the backfill DAG alone: an ingest's runs would each read the same checkpoint
NO_BACKFILLS = [t for t in DagRunType if t is not DagRunType.BACKFILL_JOB]
BACKFILL_RUNS = [DagRunType.BACKFILL_JOB, DagRunType.MANUAL]  # no scheduled ones: DailyBackfillTimetable


def ingest_dag_id(table: str) -> str:
    return INGEST_DAG_PREFIX + table


def backfill_dag_id(table: str) -> str:
    return BACKFILL_DAG_PREFIX + table


def services_dag_id(table: str) -> str:
    return SERVICES_DAG_PREFIX + table


def restore_dag_id(table: str) -> str:
    return RESTORE_DAG_PREFIX + table


def table_of_dag(dag_id: str) -> str | None:
    """The table a generated DAG serves, from its id; None for other DAGs."""
    for prefix in (INGEST_DAG_PREFIX, BACKFILL_DAG_PREFIX, SERVICES_DAG_PREFIX, RESTORE_DAG_PREFIX):
        if dag_id.startswith(prefix):
            return dag_id.removeprefix(prefix)
    return None


@dataclass(frozen=True)
class Shard:
    """The `index`-th of `count` shares of a fleet's tables and services groups: the DAGs of one of several
    DAG files, which Airflow's DAG processor parses in parallel. A table's share is its name's CRC-32 modulo
    `count` (a group's, its DAG id's): it stays put as other tables come and go, so no DAG moves to another
    file."""

    index: int = 0
    count: int = 1

    def __post_init__(self) -> None:
        if not 0 <= self.index < self.count:
            raise ValueError(f"shard {self.index} of {self.count}: give a shard from 0 to shards - 1")

    def holds(self, name: str) -> bool:
        return self.count == 1 or zlib.crc32(name.encode()) % self.count == self.index


WHOLE = Shard()


def dags_from_file(path: str | Path, *, shard: Shard = WHOLE) -> dict[str, DAG]:
    return dags_from_config(read_tables_config(path), origin=str(path), shard=shard)


def dags_from_config(config: TablesConfig | Mapping[str, Any], *, origin: str = "tables config",
                     shard: Shard = WHOLE) -> dict[str, DAG]:
    """The DAGs of every table the config accepts, in `shard`; `config` is the model or its YAML data (checked
    here). A refused table gets none, and a warning in the parse's log (hudi_ops.airflow.dag_factory.dag_files makes its
    refusal an import error Airflow shows)."""
    model = config if isinstance(config, TablesConfig) else parse_tables_config(config, origin)
    for name, reason in model.refused.items():
        if shard.holds(name):
            log.warning("no DAGs for %s", reason)
    dags: dict[str, DAG] = {}
    tables = configured_tables(model, origin, _airflow_dag_defaults())
    for table in tables.values():
        if shard.holds(table.name):
            for dag in (table.ingest_dag(), table.backfill_dag(), table.services_dag(), table.restore_dag()):
                if dag is not None:
                    dags[dag.dag_id] = dag
    return {**dags, **_group_dags(model, tables, origin, shard)}


def _group_dags(model: TablesConfig, tables: Mapping[str, Table], origin: str, shard: Shard) -> dict[str, DAG]:
    """The services groups' DAGs in `shard`, each with all of its tables, whatever their shards."""
    dags = {}
    for name, group in model.services_groups.items():
        if not shard.holds(group_dag_id(name)):
            continue
        members = {t: tables[t] for t in model.group_members(name)}
        if members:
            dags[group_dag_id(name)] = services_group_dag(name, group, members)
        else:
            log.warning("no DAG for services group %r of %s: no table joins it (`services.group`)", name, origin)
    return dags


def services_group_dag(name: str, group: ServicesGroupConfig, members: Mapping[str, Table]) -> DAG:
    """The `hudi_services_group__<name>` DAG (hudi_ops.airflow.dag_factory.services_group): a `plan` task per tick, then
    the services it picked as one mapped task, at most `budget` at once."""
    with DAG(
        group_dag_id(name), schedule=CronTriggerTimetable(group.schedule, timezone="UTC"), max_active_runs=1,
        max_active_tasks=group.budget, catchup=False, allowed_run_types=NO_BACKFILLS,
        tags=["hudi", "services", "services group"],
        description=f"Hudi's table services on {len(members)} table(s), {group.budget} job(s) at once at most, "
                    f"picked by the {group.policy!r} policy every tick.",
        doc_md=f"Services group `{name}`: {', '.join(f'`{t}`' for t in members)}. Each run measures every table "
               f"(`plan`'s log says what each needs and what waits) and runs the services the `{group.policy}` "
               f"policy picks, at most {group.budget} at once, one per table.",
    ) as dag:
        plan = task(task_id="plan")(plan_group_tick)(
            group=name, policy=group.policy, budget=group.budget,
            tables={t: member.group_member() for t, member in members.items()})
        HudiServiceOperator.partial(
            task_id="service", map_index_template="{{ task.service }} of {{ task.table_name }}",
            **{**RETRY_DEFAULTS, "retries": SERVICE_RETRIES},  # a mapped task's retries are its partial's
        ).expand_kwargs(plan)
    return dag


@functools.cache
def _backfill_timetable() -> DailyBackfillTimetable:
    """One for every backfill DAG (it keeps no state): each new one has its cron described, a fifth of the
    DAG's build."""
    return DailyBackfillTimetable()


def _with_params(dag: DAG, params: Mapping[str, Param]) -> DAG:
    """`dag` with `params`, given after its tasks were built, and each task its copy of them marked as the
    DAG's, as Airflow gives a task of a DAG that has params. Built inside such a DAG, an operator copies them
    once for each of its classes (Airflow's `apply_defaults`), all copies but one thrown away: a third of a
    backfill DAG's build. The run's `params` (the DAG's, the task's over them) are the same."""
    dag.params = params
    for op in dag.tasks:
        op.params = ParamsDict({name: _task_param(param) for name, param in dag.params.items()})
    return dag


def _task_param(param: Param) -> Param:
    """A task's own copy of its DAG's `param` (a run's values go into it), marked as the DAG's."""
    own = copy.copy(param)
    own.source = "dag"
    return own


#: the DAG arguments whose defaults Airflow's DAG reads from Airflow's config, at every DAG
_CONFIG_DEFAULTED = ("max_active_tasks", "max_consecutive_failed_dag_runs", "disable_bundle_versioning")


def _airflow_dag_defaults() -> dict[str, Any]:
    """Those defaults as Airflow's DAG makes them (its attrs fields' factories), made once for the DAGs of
    a parse: made at every DAG, they are a tenth of the DAGs' build."""
    fields = attrs.fields_dict(DAG)
    return {name: fields[name].default.factory() for name in _CONFIG_DEFAULTED if name in fields}


def configured_tables(config: TablesConfig, origin: str,
                      dag_defaults: Mapping[str, Any] = MappingProxyType({})) -> dict[str, Table]:
    """Each table of the config as its DAGs are built: with the options each of its jobs runs with."""
    return {name: Table(name, table, origin, dag_defaults) for name, table in config.tables.items()}


class Table:
    def __init__(self, name: str, config: TableConfig, origin: str, dag_defaults: Mapping[str, Any]) -> None:
        self.name, self.config, self.origin = name, config, origin
        self.dag_defaults = dag_defaults  # _airflow_dag_defaults(), or none: Airflow's DAG reads them itself
        self.services = config.services or ServicesConfig()

    @property
    def table_conf(self) -> dict[str, str]:
        """Every job's options for the table: its catalog's sync and its metrics reporter, its `hoodie_conf`
        over them."""
        catalog = self.config.catalog.hoodie_conf(self.name) if self.config.catalog else {}
        return {**catalog, **self.config.metrics_conf(), **self.config.hoodie_conf}

    def has_services_dag(self) -> bool:
        return bool(self.services.runs) and self.services.group is None

    def service_confs(self) -> dict[str, dict[str, str]]:
        """Each service's options as its job runs them: the table's, the writers' inline services off, the
        service's own over them; archive always (it runs with any service)."""
        services, base_conf = self.services, self._inline_off(self.table_conf)
        confs = {s: {**base_conf, **getattr(services, s)} for s in (COMPACTION.name, CLUSTERING.name)
                 if s in services.runs}
        if services.clean is not None:
            confs[CLEAN.name] = self._inline_off(self.clean_conf())
        confs[ARCHIVE.name] = {**self.table_conf, **(services.archive or {})}
        return confs

    def group_member(self) -> dict[str, Any]:
        """What its services group's tick needs of the table (hudi_ops.airflow.dag_factory.services_group)."""
        args = self._job_args(self.services)
        return {"base_path": self.config.base_path, "aws_conn_id": self.config.aws_conn_id,
                "priority": self.services.priority, "quota": self.services.quota, "schedule": self.services.schedule,
                "ingests": self.config.ingest is not None,
                "tasks": {s: {**args, "service": s, "hoodie_conf": conf} for s, conf in self.service_confs().items()}}

    def clean_conf(self) -> dict[str, str]:
        """The options of the services DAG's clean, else of the writers' inline cleans."""
        return {**self.table_conf, **(self.services.clean or {})}

    def writer_conf(self) -> dict[str, str]:
        """The table's options for its writers (its validators' among them); services the services DAG
        runs are off inline (a writer running a plan inline would not take the plan's lock), archival too
        when there is that DAG."""
        validators = self.config.validators.hoodie_conf() if self.config.validators else {}
        return self._inline_off({**validators, **self.table_conf})

    def _inline_off(self, conf: dict[str, str]) -> dict[str, str]:
        """`conf` with the inline services off (the config's model refused a conf that turns one on)."""
        return {**conf, **inline_off(self.services.off_inline)}

    def _job_args(self, section: SparkSection | None = None) -> dict[str, Any]:
        """The arguments every job of the table takes; the DAG `section`'s Spark connection, settings and
        deferral over the table's."""
        c = self.config
        own = section if section is not None else SparkSection()
        return {"base_path": c.base_path, "table_name": self.name, "zookeeper_conn_id": c.zookeeper_conn_id,
                "aws_conn_id": c.aws_conn_id, "conn_id": own.spark_conn_id or c.spark_conn_id,
                "conf": {**c.spark_conf, **own.spark_conf},
                "deferrable": c.deferrable if own.deferrable is None else own.deferrable,
                "hive_metastore_conn_id": c.catalog.hive_metastore_conn_id if c.catalog else None}

    def _dag(self, dag_id: str, **kwargs: Any) -> DAG:
        return DAG(dag_id, **{**self.dag_defaults, **kwargs})

    def _no_backfills(self, what: str) -> str:
        """The description of a DAG that takes no Airflow backfill: where backfills go (Airflow's refusal
        names only the DAG it refuses)."""
        where = f"Airflow backfills of the table: {backfill_dag_id(self.name)}" if self.config.backfill else \
            "Airflow backfills: give the table a `backfill:` section, for its backfill DAG"
        return f"{what} {where}."

    def _operator_args(self, section: SparkSection) -> dict[str, Any]:
        c = self.config
        return {
            **self._job_args(section), "record_key_field": c.record_key, "partition_path_field": c.partition_field,
            "ordering_field": c.ordering_field,
            "table_type": c.table_type,  # None: the table's own (COPY_ON_WRITE when it is new)
        }

    def ingest_dag(self) -> DAG | None:
        ingest = self.config.ingest
        if ingest is None:
            return None
        schedule: Any = ingest.schedule
        if ingest.on_new_messages:
            from hudi_ops.airflow.dag_factory.kafka_events import new_messages_asset

            messages = new_messages_asset(self.name, ingest.topics, ingest.kafka_conn_id)
            schedule = AssetOrTimeSchedule(timetable=CronTriggerTimetable(ingest.schedule, timezone="UTC"),
                                           assets=[messages]) if ingest.schedule else [messages]
        goal = self.config.freshness
        with self._dag(
            ingest_dag_id(self.name), schedule=schedule, max_active_runs=1, catchup=False,
            allowed_run_types=NO_BACKFILLS, tags=["hudi", self.name],
            deadline=freshness_deadline(self.name, goal) if goal is not None else None,
            description=self._no_backfills(f"Ingests {ingest.describe()} into {self.name}."),
            doc_md=f"Ingests {ingest.describe(markdown=True)} into `{self.name}`.",
        ) as dag:
            # several topics: a pipeline each, its own task and checkpoint (HoodieStreamer's holds one topic)
            for topic in ingest.topics or (None,):
                HudiIngestOperator(
                    task_id="ingest" if len(ingest.topics) < 2 else f"ingest__{topic}", source_kind=ingest.source_kind,
                    source_path=ingest.source_path, source_format=ingest.source_format, kafka_topic=topic,
                    kafka_conn_id=ingest.kafka_conn_id, operation=ingest.operation,
                    source_limit=ingest.source_limit_bytes, source_limit_files=ingest.source_limit_files,
                    source_limit_events=ingest.source_limit_events, kafka_value_format=ingest.kafka_value_format,
                    hoodie_conf={**self.writer_conf(), **ingest.value_schema_conf()}, freshness=goal,
                    **self._operator_args(ingest),
                )
        return dag

    def backfill_dag(self) -> DAG | None:
        backfill = self.config.backfill
        if backfill is None:
            return None
        source = backfill.source_path
        hoodie_conf = self.writer_conf()
        parallelism = backfill.parallelism if backfill.parallelism is not None else \
            int(hoodie_conf.get(PARALLELISM_KEYS[0], DEFAULT_PARALLELISM))
        params = {  # an Airflow backfill's run writes its own day: the window is for manual runs
            "start": Param(None, type=["null", "string"], format="date",
                           description="first dt=YYYY-MM-DD partition of a manual run"),
            "end": Param(None, type=["null", "string"], format="date",
                         description="last dt=YYYY-MM-DD partition of a manual run"),
            "operation": Param(backfill.operation, type="string", enum=list(BACKFILL_OPERATIONS),
                               description="INSERT_OVERWRITE: each day's partition replaced by the day's source; "
                                           "DELETE_PARTITION: the window's partitions deleted"),
            "source_path": Param(source, type="string", minLength=1) if source else
            Param(type="string", minLength=1, description="folder holding the dt=YYYY-MM-DD partitions"),
            "source_format": Param(backfill.source_format, type="string", enum=list(SOURCE_FORMATS)),
            "parallelism": Param(parallelism, type="integer", minimum=0,
                                 description="shuffle parallelism of the writes (0: Hudi's choice, from the input)"),
        }
        conf = {**hoodie_conf, **dict.fromkeys(PARALLELISM_KEYS, "{{ params.parallelism }}")}
        with self._dag(  # its params once its task is built: _with_params
            backfill_dag_id(self.name), schedule=_backfill_timetable(), allowed_run_types=BACKFILL_RUNS,
            max_active_runs=backfill.max_active_runs, catchup=False, tags=["hudi", self.name, "backfill"],
            description=f"Backfills {self.name} from dt=YYYY-MM-DD source folders: an Airflow backfill "
                        "(a run per day), or a manual run with start and end.",
            doc_md=f"Backfills `{self.name}` from dt=YYYY-MM-DD source partitions, one commit per day: "
                   f"`airflow backfill create --dag-id {backfill_dag_id(self.name)} --from-date D1 --to-date D2` "
                   "(or the UI's Backfill dialog) makes a run per day, which writes its day; a manual run "
                   "writes the days from its `start` to its `end`.",
        ) as dag:
            HudiBackfillOperator(  # None renders as "None": an empty window is none
                task_id="backfill", start="{{ params.start or '' }}", end="{{ params.end or '' }}",
                source_path="{{ params.source_path }}", source_format="{{ params.source_format }}",
                operation="{{ params.operation }}", hoodie_conf=conf, **self._operator_args(backfill),
                # Airflow's own backfill runs up to its --max-active-runs (10) at once, past the DAG's
                max_active_tis_per_dag=backfill.max_active_runs,
            )
        return _with_params(dag, params)

    def services_dag(self) -> DAG | None:
        services = self.services
        if not self.has_services_dag():
            return None
        confs = self.service_confs()
        args = self._job_args(services)
        asset = table_asset(self.config.base_path)
        cron = services.schedule
        schedule = AssetOrTimeSchedule(timetable=CronTriggerTimetable(cron, timezone="UTC"), assets=[asset]) \
            if cron else [asset]
        with self._dag(
            # one service job of the table at a time: services never pile up, on a table or on the cluster
            services_dag_id(self.name), schedule=schedule, max_active_runs=1, max_active_tasks=1, catchup=False,
            allowed_run_types=NO_BACKFILLS, tags=["hudi", self.name, "services"],
            description=self._no_backfills(f"Hudi's table services on {self.name}."),
            doc_md=f"Hudi's table services on `{self.name}`: {', '.join(services.runs)}; "
                   "after every commit of its writers" + (f" and on `{cron}`" if cron else "") + ".",
        ) as dag:
            executed = []
            for operator in (HudiCompactionOperator, HudiClusteringOperator):
                service = operator.service
                if service in services.runs:
                    conf = confs[service]
                    schedule_task = operator(task_id=f"schedule_{service}", mode="schedule", hoodie_conf=conf, **args)
                    execute_task = operator(task_id=f"execute_{service}", mode="execute", hoodie_conf=conf,
                                            plan_task_id=schedule_task.task_id, trigger_rule="none_failed", **args)
                    schedule_task >> execute_task
                    executed.append(execute_task)
            if services.clean is not None:
                clean = HudiCleanOperator(task_id="clean", hoodie_conf=confs[CLEAN.name], trigger_rule="none_failed",
                                          **args)
                executed >> clean  # cleans after compaction and clustering, which leave old slices behind
                executed = [clean]
            archive = HudiArchiveOperator(task_id="archive", trigger_rule="none_failed",
                                          hoodie_conf=confs[ARCHIVE.name], **args)
            executed >> archive  # last: it keeps what the clean's policy still needs
        return dag

    def writer_dag_ids(self) -> list[str]:
        """The table's DAGs that write to it: what a restore stops (its services group's whole DAG: the
        group's other tables wait for the restore)."""
        services = [services_dag_id(self.name)] if self.has_services_dag() else \
            [group_dag_id(self.services.group)] if self.services.group is not None else []
        return [dag_id for section, dag_id in (("ingest", ingest_dag_id(self.name)),
                                               ("backfill", backfill_dag_id(self.name)))
                if getattr(self.config, section) is not None] + services

    def restore_dag(self) -> DAG | None:
        writers = self.writer_dag_ids()
        if not writers:
            return None
        wait = self.config.restore.wait_timeout_minutes
        api = {"airflow_api_conn_id": self.config.airflow_api_conn_id}
        table = {"base_path": self.config.base_path, "aws_conn_id": self.config.aws_conn_id}
        params = {"savepoint": Param(type="string", pattern="^[0-9]{14}([0-9]{3})?$",
                                     description="the savepoint to restore to (`hudi-ops savepoints` lists them)")}
        with self._dag(  # its params once its tasks are built: _with_params
            restore_dag_id(self.name), schedule=None, max_active_runs=1, catchup=False,
            allowed_run_types=NO_BACKFILLS, tags=["hudi", self.name, "restore"],
            description=self._no_backfills(f"Restores {self.name} to a savepoint."),
            doc_md=f"Restores `{self.name}` to a savepoint: pauses {', '.join(writers)}, waits for their runs "
                   "and writes to end, restores, and unpauses what it paused.",
        ) as dag:
            pause = PauseWritersOperator(task_id="pause_writers", writer_dag_ids=writers, **api)
            wait = WritersIdleSensor(
                task_id="wait_for_writers", writer_dag_ids=writers, hoodie_conf=self.table_conf,
                timeout=60 * wait, **api, **table)
            run = HudiRestoreOperator(task_id="restore", savepoint="{{ params.savepoint }}",
                                      hoodie_conf=self.table_conf, **self._job_args())
            unpause = UnpauseWritersOperator(task_id="unpause_writers", pause_task_id=pause.task_id,
                                             work_task_id=run.task_id, **api, **table)
            pause >> wait >> run >> unpause
        return _with_params(dag, params)
