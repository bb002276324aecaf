"""The tables config (`tables.yaml`) as a typed model: what the DAG factory, the timeline view and `make up`
read. Its fields are docs/tables-config.md's reference. A bad table is refused alone, with the table, the key
and the fix (`TablesConfig.refused`), so that every other table keeps its DAGs; a file Python cannot
read as a config at all fails as a whole.

    defaults: {spark_conn_id: spark_default, zookeeper_conn_id: hudi_zookeeper_default, ...}
    tables:
      trips: {base_path: ..., record_key: ..., ingest: {...}, backfill: {...}, services: {...}, restore: {...}}

`defaults` holds any table key but the DAG sections (ingest, backfill, services, restore); a table's own
value wins, as a whole. A section's `spark_conn_id` and `spark_conf` go over the table's for that DAG.
"""

from __future__ import annotations

import datetime as dt
import functools
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any, Literal

import yaml
from airflow.sdk import CronTriggerTimetable
from croniter import croniter  # Airflow's own cron library, installed with it
from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from hudi_ops.airflow.hooks.airflow_api import DEFAULT_CONN_ID as AIRFLOW_API_CONN_ID
from hudi_ops.airflow.hooks.hive_metastore import DEFAULT_CONN_ID as METASTORE_CONN_ID
from hudi_ops.airflow.hooks.kafka import DEFAULT_CONN_ID as DEFAULT_KAFKA_CONN_ID
from hudi_ops.airflow.hooks.zookeeper_lock import ZookeeperLockHook
from hudi_ops.errors import ConfigError
from hudi_ops.fleet.policies import POLICIES
from hudi_ops.job_specs.writes import (
    BACKFILL_OPERATIONS,
    KAFKA_KINDS,
    OPERATIONS,
    SOURCE_FORMATS,
    SOURCE_KINDS,
    TABLE_TYPES,
    VALUE_FORMATS,
)
from hudi_ops.options.config_property import HoodieConfig
from hudi_ops.options.keys import (
    IndexConfig,
    MetaSyncConfig,
    MetricsConfig,
    PreCommitValidatorConfig,
    StreamerConfig,
    WriteConfig,
)
from hudi_ops.options.occ import (
    NON_BLOCKING,
    is_simple_bucket_index,
    multi_writer_mode,
)
from hudi_ops.read.table_services import ARCHIVE, CLEAN, CLUSTERING, COMPACTION, SERVICES

SourceFormat = Literal[tuple(SOURCE_FORMATS)]  # type: ignore[valid-type]
SourceKind = Literal[SOURCE_KINDS]  # type: ignore[valid-type]
KafkaValueFormat = Literal[VALUE_FORMATS]  # type: ignore[valid-type]
Operation = Literal[OPERATIONS]  # type: ignore[valid-type]
BackfillOperation = Literal[BACKFILL_OPERATIONS]  # type: ignore[valid-type]
TableType = Literal[TABLE_TYPES]  # type: ignore[valid-type]


def _as_text(value: Any) -> Any:
    if value is None:  # `hoodie_conf:` with nothing after it
        return {}
    if isinstance(value, Mapping):
        return {str(k): v if isinstance(v, str) else str(v).lower() if isinstance(v, bool) else str(v)
                for k, v in value.items()}
    return value


#: `hoodie.*` (or Spark) options: YAML numbers and booleans are taken as the text Hudi reads
Options = Annotated[dict[str, str], BeforeValidator(_as_text)]


def _upper(value: Any) -> Any:
    return value.strip().upper() if isinstance(value, str) else value


def _none_if_blank(value: Any) -> Any:
    return None if isinstance(value, str) and not value.strip() else value


#: Hudi's enums, in any case, as the Spark jobs take them
Upper = BeforeValidator(_upper)
#: a field named as "" means none, as an absent one
Blank = BeforeValidator(_none_if_blank)


#: Airflow's own schedule presets besides the cron ones (@hourly, @daily, ...): not crons, so not for a
#: services DAG, whose schedule is a cron beside its assets
AIRFLOW_ONLY_PRESETS = ("@once", "@continuous")


@functools.cache  # a fleet's tables share a few schedules: each is checked once a parse, not once a table
def _check_cron(value: str) -> None:
    CronTriggerTimetable(value, timezone="UTC").validate()
    croniter(value).get_next(dt.datetime)


def _airflow_schedule(value: str | None, *, also: tuple[str, ...] = ()) -> str | None:
    """`value` if Airflow takes it as a cron schedule (the timetable Airflow builds from it validates, as the
    DAG processor checks it) and it fires at all; else ValueError naming the fix."""
    if value is None or value in also:
        return value
    try:
        _check_cron(value)
    except Exception as e:  # Airflow's AirflowTimetableInvalid, croniter's errors: the same fix
        presets = ", ".join(["@hourly", "@daily", "@weekly", "@monthly", "@yearly", *also])
        raise ValueError(f"{value!r} is not a schedule Airflow takes ({e}); give a cron expression such as "
                         f"'*/10 * * * *' or one of {presets}, or leave the key out") from None
    return value


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class SparkSection(_Section):
    """A DAG's own Spark connection and settings, over the table's: e.g. a backfill on a smaller share of
    the cluster, so that it leaves the ingest its cores."""

    spark_conn_id: Annotated[str | None, Blank] = Field(None, description="none: the table's")
    spark_conf: Options = Field(default_factory=dict, description="over the table's, key by key")
    deferrable: bool | None = Field(None, description="none: the table's")


class IngestConfig(SparkSection):
    """The `hudi_ingest__<table>` DAG, one run at a time: new files of `source_path`, or new messages of
    `kafka_topic` (`source_kind: kafka`; several topics: a task each, each its own pipeline with its own
    checkpoint, as HoodieStreamer keeps one topic's)."""

    source_kind: SourceKind = "files"
    source_path: Annotated[str | None, Blank] = Field(
        None, description="the landing folder the ingest reads; the upstream table, for `source_kind: hudi`")
    source_format: SourceFormat = "parquet"
    kafka_topic: Annotated[str | list[str] | None, Blank] = Field(
        None, description="the topic a Kafka ingest reads, or a list of topics")
    kafka_conn_id: str = Field(DEFAULT_KAFKA_CONN_ID, min_length=1,
                               description="a connection of type kafka: its extra holds the client's settings")
    kafka_value_format: KafkaValueFormat = Field("json", description="how the topic's values are written: JSON "
                                                 "objects, Avro records, or Avro in Confluent's framing")
    kafka_value_schema: Annotated[str | None, Blank] = Field(
        None, description="the Avro schema (.avsc) of the topic's values: a local path or an s3:// URI the job reads")
    schedule: str | None = Field(None, description="a cron expression or preset; none: triggered only; with "
                                 "`on_new_messages`, the longest wait between runs")
    on_new_messages: bool = Field(False, description="a Kafka ingest also runs when its topic has new messages "
                                  "(an AssetWatcher on the Kafka provider's message-queue trigger)")
    operation: Annotated[Operation, Upper] = "UPSERT"
    source_limit_bytes: int = Field(0, ge=0, description="bytes of source files per commit at most (0: no bound)")
    source_limit_files: int = Field(0, ge=0, description="source files per commit at most (0: no bound)")
    source_limit_events: int = Field(0, ge=0, description="Kafka messages per commit at most (0: no bound)")

    @model_validator(mode="after")
    def _source(self) -> IngestConfig:
        if self.source_kind == "files" and not self.source_path:
            raise ValueError("`source_path` is required: the landing folder the ingest reads (or `source_kind: "
                             "kafka` with `kafka_topic`)")
        if self.source_kind in ("debezium", "hudi") and self.operation != "UPSERT":
            raise ValueError(f"`source_kind: {self.source_kind}` brings changes that say what they do: leave "
                             "`operation` out")
        if self.source_kind == "kafka" and self.operation == "BULK_INSERT":
            raise ValueError("`source_kind: kafka` cannot take `operation: BULK_INSERT` (Hudi's bulk insert by rows "
                             "commits without HoodieStreamer's checkpoint); use INSERT or UPSERT")
        if self.source_kind == "hudi" and not self.source_path:
            raise ValueError("`source_kind: hudi` needs `source_path`, the upstream Hudi table's base path")
        if self.kafka_value_format != "json" and self.source_kind != "kafka":
            raise ValueError(f"`kafka_value_format: {self.kafka_value_format}` is for `source_kind: kafka` (a "
                             "Debezium change log is read as JSON): leave it out")
        if self.kafka_value_format != "json" and not self.kafka_value_schema:
            raise ValueError(f"`kafka_value_format: {self.kafka_value_format}` needs `kafka_value_schema`, the path "
                             "of the values' Avro schema (.avsc)")
        if self.kafka_value_format == "json" and self.kafka_value_schema:
            raise ValueError("`kafka_value_schema` is the schema of Avro values: give `kafka_value_format: avro` (or "
                             "`confluent_avro`), or leave it out")
        if self.source_kind in KAFKA_KINDS:
            if not self.topics:
                raise ValueError(f"`source_kind: {self.source_kind}` needs `kafka_topic`, the topic the ingest reads")
            if len(set(self.topics)) < len(self.topics) or not all(t.strip() for t in self.topics):
                raise ValueError(f"`kafka_topic` lists a topic twice, or an empty name: {list(self.topics)}")
            if self.source_path:
                raise ValueError("`source_path` names a landing folder, which a Kafka ingest does not read: "
                                 "leave it out, or give `source_kind: files`")
            if self.on_new_messages and self.schedule in AIRFLOW_ONLY_PRESETS:
                raise ValueError(f"with `on_new_messages`, `schedule` is the longest wait between runs: a cron "
                                 f"expression or preset, not {self.schedule}")
        elif self.kafka_topic:
            raise ValueError(f"`kafka_topic` names a topic, which `source_kind: {self.source_kind}` does not read: "
                             "leave it out, or give `source_kind: kafka`")
        elif self.on_new_messages:
            raise ValueError(f"`on_new_messages` watches a topic, and `source_kind: {self.source_kind}` reads none: "
                             "leave it out, or give `schedule`")
        return self

    def value_schema_conf(self) -> dict[str, str]:
        """The Avro values' schema as HoodieStreamer's file-based schema provider's option, if any."""
        return {StreamerConfig.SOURCE_SCHEMA_FILE.name: self.kafka_value_schema} if self.kafka_value_schema else {}

    @property
    def topics(self) -> tuple[str, ...]:
        """The topics `kafka_topic` names, in its order."""
        if self.kafka_topic is None:
            return ()
        return (self.kafka_topic,) if isinstance(self.kafka_topic, str) else tuple(self.kafka_topic)

    def describe(self, *, markdown: bool = False) -> str:
        quote = "`" if markdown else ""
        topics = ", ".join(f"{quote}{t}{quote}" for t in self.topics)
        if self.source_kind == "hudi":
            return f"the commits of upstream Hudi table {quote}{self.source_path}{quote}"
        if self.source_kind == "debezium":
            return f"the changes of Debezium's change log{'s' if len(self.topics) > 1 else ''} {topics}"
        if self.source_kind == "kafka":
            return f"new messages of Kafka topic{'s' if len(self.topics) > 1 else ''} {topics}"
        return f"new files of {quote}{self.source_path}{quote}"

    @field_validator("schedule")
    @classmethod
    def _schedule(cls, value: str | None) -> str | None:
        return _airflow_schedule(value, also=AIRFLOW_ONLY_PRESETS)


class BackfillConfig(SparkSection):
    """The `hudi_backfill__<table>` DAG, triggered with a window of `dt=YYYY-MM-DD` folders."""

    source_path: str | None = Field(None, description="the folder of dt= folders; none: a Param each run")
    source_format: SourceFormat = "parquet"
    operation: Annotated[BackfillOperation, Upper] = "UPSERT"
    max_active_runs: int = Field(4, gt=0, description="backfill runs at once")
    parallelism: int | None = Field(None, ge=0, description="shuffle parallelism (0: Hudi's choice)")


class ServicesConfig(SparkSection):
    """The `hudi_services__<table>` DAG: each service's hoodie.* options; it archives after the others. With
    `group`, the table's services run in that services group's DAG instead, at its policy's turn."""

    schedule: str | None = None
    group: Annotated[str | None, Blank] = Field(None, description="a key of `services_groups`")
    priority: float = Field(1.0, gt=0, description="the table's weight in its group's `need` policy")
    quota: float = Field(1.0, gt=0, description="the table's share of its group's runs (`quota` policy)")
    compaction: Options | None = None
    clustering: Options | None = None
    clean: Options | None = None
    archive: Options | None = None

    @field_validator("schedule")
    @classmethod
    def _schedule(cls, value: str | None) -> str | None:
        return _airflow_schedule(value)  # a cron beside the assets: Airflow's only-presets make no sense there

    @field_validator("compaction", "clustering", "clean", "archive", mode="before")
    @classmethod
    def _empty_is_on(cls, value: Any) -> Any:
        return {} if value is None else value  # `clustering:` with nothing after it turns the service on

    @property
    def runs(self) -> tuple[str, ...]:
        """The services configured, of compaction, clustering and clean."""
        return tuple(s.name for s in (COMPACTION, CLUSTERING, CLEAN) if getattr(self, s.name) is not None)

    @property
    def off_inline(self) -> tuple[str, ...]:
        """What no other job of the table runs inline: the services this DAG runs, and archival with them
        (its `archive` task is the table's only archival)."""
        return (*self.runs, ARCHIVE.name) if self.runs else ()


class ServicesGroupConfig(_Section):
    """A `hudi_services_group__<name>` DAG: the table services of the tables that join it, at most `budget`
    jobs at once, picked at each tick by `policy` (hudi_ops.fleet.policies)."""

    budget: int = Field(2, gt=0, description="service jobs of the group's tables at once, at most")
    policy: Literal[POLICIES] = "need"  # type: ignore[valid-type]
    schedule: str = Field("*/5 * * * *", description="the group's tick: when it measures its tables and picks")

    @field_validator("schedule")
    @classmethod
    def _schedule(cls, value: str) -> str:
        return _airflow_schedule(value)  # type: ignore[return-value]


class RestoreConfig(_Section):
    wait_timeout_minutes: float = Field(60, gt=0, description="how long the restore waits for writers to stop")


class CatalogConfig(_Section):
    """Where the table is registered after its commits: a Hive Metastore (hudi_ops.spark.jobs.meta_sync)."""

    hive_metastore_conn_id: str = Field(METASTORE_CONN_ID, min_length=1,
                                        description="an Airflow connection of type hive_metastore")
    database: str = Field("default", pattern=r"^\w+$", description="the metastore's database")
    table: Annotated[str | None, Blank] = Field(None, pattern=r"^\w+$",
                                                description="the metastore's table; none: the table's name")

    def hoodie_conf(self, table_name: str) -> dict[str, str]:
        """Hudi's sync options for the table (the metastore's address comes from the connection when a
        job runs: hudi_ops.airflow.hooks.hive_metastore)."""
        return {MetaSyncConfig.ENABLED.name: "true", MetaSyncConfig.MODE.name: "hms",
                MetaSyncConfig.DATABASE.name: self.database, MetaSyncConfig.TABLE.name: self.table or table_name}


class ValidatorsConfig(_Section):
    """Hudi's SQL pre-commit validators on the table's writers: a batch they refuse is never committed."""

    single_result: list[str] = Field(default_factory=list, description="`query#expected value` each")
    equality: list[str] = Field(default_factory=list, description="queries the commit must not change")
    inequality: list[str] = Field(default_factory=list, description="queries the commit must change")

    @model_validator(mode="after")
    def _queries_hudi_can_run(self) -> ValidatorsConfig:
        table = PreCommitValidatorConfig.TABLE_VARIABLE
        for kind, _, _ in PreCommitValidatorConfig.KINDS:
            for query in getattr(self, kind):
                if table not in query:
                    raise ValueError(f"validators.{kind}: {query!r} does not read {table}, which Hudi replaces by "
                                     "the table as the commit would leave it (and before it, for equality)")
                if ";" in query:
                    raise ValueError(f"validators.{kind}: {query!r} holds ';', which Hudi splits queries at; "
                                     "give each query as an item of the list")
                if kind == "single_result" and query.count("#") != 1:
                    raise ValueError(f"validators.single_result: {query!r} needs one '#' between the query and "
                                     "the value it must return (`select count(*) from <TABLE_NAME> where fare < "
                                     "0#0`)")
        return self

    def hoodie_conf(self) -> dict[str, str]:
        kinds = [k for k in PreCommitValidatorConfig.KINDS if getattr(self, k[0])]
        if not kinds:
            return {}
        return {PreCommitValidatorConfig.VALIDATORS.name: ",".join(name for _, name, _ in kinds),
                **{key.name: ";".join(getattr(self, kind)) for kind, _, key in kinds}}


class TableConfig(_Section):
    """One table of the config."""

    base_path: str = Field(min_length=1, description="the table's folder or URI")
    record_key: str = Field(min_length=1, description="the record key field(s), comma-separated")
    partition_field: Annotated[str | None, Blank] = None
    ordering_field: Annotated[str | None, Blank] = None
    table_type: Annotated[TableType | None, Upper, Blank] = Field(
        None, description="none: the table's own, COPY_ON_WRITE for a new one")
    hoodie_conf: Options = Field(default_factory=dict)
    ingest: IngestConfig | None = None
    backfill: BackfillConfig | None = None
    services: ServicesConfig | None = None
    restore: Annotated[RestoreConfig, BeforeValidator(lambda v: {} if v is None else v)] = Field(
        default_factory=RestoreConfig)
    spark_conn_id: str = Field("spark_default", min_length=1)
    spark_conf: Options = Field(default_factory=dict)
    deferrable: bool = Field(False, description="a YARN cluster-mode job's task waits in Airflow's triggerer while "
                             "its application runs, holding no worker slot")
    zookeeper_conn_id: str | None = ZookeeperLockHook.default_conn_name
    aws_conn_id: str | None = Field(None, description="for a table on S3: an Airflow connection of type aws "
                                    "(keys, endpoint_url, region_name, config_kwargs.s3.addressing_style)")
    airflow_api_conn_id: str = AIRFLOW_API_CONN_ID
    catalog: CatalogConfig | None = Field(None, description="a Hive Metastore the table is synced to")
    validators: ValidatorsConfig | None = Field(None, description="Hudi's pre-commit validators on its writers")
    freshness: float | None = Field(None, gt=0, description="minutes: each ingest run has that long from being "
                                    "queued to finish (an Airflow deadline alert), and the fleet page shows the "
                                    "table late once its latest ingest is older")
    metrics: Options | None = Field(None, description="Hudi's metrics reporter for every job of the table: "
                                    f"{MetricsConfig.PREFIX}* options ({MetricsConfig.ON.name} is implied)")

    @field_validator("metrics")
    @classmethod
    def _hudi_metrics(cls, value: dict[str, str] | None) -> dict[str, str] | None:
        if value is None:
            return None
        other = sorted(k for k in value if not k.startswith(MetricsConfig.PREFIX))
        if other:
            raise ValueError(f"`metrics` holds Hudi's hoodie.metrics.* options, not {', '.join(other)}; put other "
                             "options under `hoodie_conf`")
        try:
            HoodieConfig(value).get(MetricsConfig.REPORTER_TYPE)
            on = HoodieConfig({MetricsConfig.ON.name: "true", **value}).get(MetricsConfig.ON) == "TRUE"
        except ConfigError as e:
            raise ValueError(str(e)) from None
        if on and MetricsConfig.REPORTER_TYPE.name not in value:  # Hudi's default would be Graphite on localhost
            raise ValueError(f"`metrics` needs {MetricsConfig.REPORTER_TYPE.name} (PROMETHEUS_PUSHGATEWAY, GRAPHITE, "
                             f"JMX, DATADOG, ...), or {MetricsConfig.ON.name}: false to turn Hudi's metrics off")
        return value

    def metrics_conf(self) -> dict[str, str]:
        """Hudi's reporter options for every job of the table; none without `metrics`."""
        return {MetricsConfig.ON.name: "true", **self.metrics} if self.metrics is not None else {}

    @model_validator(mode="after")
    def _services_that_can_run(self) -> TableConfig:
        if self.services and self.services.compaction is not None and self.table_type != "MERGE_ON_READ":
            raise ValueError("a compaction service needs `table_type: MERGE_ON_READ`: only MERGE_ON_READ tables "
                             "have logs to compact")
        if self.services and self.services.archive is not None and not self.services.runs:
            raise ValueError("`services.archive` sets the services DAG's archive task, and that DAG runs only with "
                             "one of compaction, clustering or clean; add one, or drop `archive`")
        if self.services and self.services.group is None and (
                self.services.priority != 1.0 or self.services.quota != 1.0):
            raise ValueError("`services.priority` and `.quota` rank the table in its services group; add "
                             "`services.group`, or drop them")
        if self.services and self.services.group is not None and not self.services.runs:
            raise ValueError("`services.group` names where the table's services run, and it names none; add one "
                             "of compaction, clustering or clean")
        if self.services and (self.services.spark_conn_id or self.services.spark_conf) and not self.services.runs:
            raise ValueError("`services.spark_conn_id` and `.spark_conf` set the services DAG's Spark, and that DAG "
                             "runs only with one of compaction, clustering or clean; add one, or drop them")
        if self.freshness is not None and self.ingest is None:
            raise ValueError("`freshness` is a goal for the table's ingest (its runs' deadline, its lag since the "
                             "latest ingest): add an `ingest:` section, or drop `freshness`")
        if self.validators and self.validators.hoodie_conf() and self.table_type != "COPY_ON_WRITE":
            raise ValueError("`validators` need `table_type: COPY_ON_WRITE`: Hudi's pre-commit validators read the "
                             "table's base files before and after the commit, and a MERGE_ON_READ table's updates "
                             "go to log files they never read")
        self._writers_need_a_lock()
        self._non_blocking_needs()
        services = self.services or ServicesConfig()
        for whose, conf in (("its writers", self.hoodie_conf), ("its compaction", services.compaction or {}),
                            ("its clustering", services.clustering or {}), ("its clean", services.clean or {})):
            for service in services.off_inline:
                for key, off in SERVICES[service].inline_off.items():
                    if conf.get(key, off).lower() != off:
                        raise ValueError(f"it runs {service} in its services DAG but sets {key}={conf[key]} for "
                                         f"{whose}; drop that setting")
        return self

    def _writers_need_a_lock(self) -> None:
        """Without a lock, each spark-submit of the table is a writer alone: two at once write one table
        with nothing between them (Hudi's OCC checks conflicts under the lock). So no lock, one writer."""
        if self.zookeeper_conn_id is not None:
            return
        writers = [f"its {section} DAG" for section in ("ingest", "backfill") if getattr(self, section)]
        if self.services and self.services.runs:
            writers.append("its services DAG (each service a job of its own)")
        fix = "give the table a zookeeper_conn_id (a hudi_zookeeper connection) so that they take its lock"
        if len(writers) > 1:
            raise ValueError(f"`zookeeper_conn_id` is null (no lock), yet {' and '.join(writers)} write the table "
                             f"at once; {fix}")
        if self.backfill and self.backfill.max_active_runs > 1:
            raise ValueError(f"`zookeeper_conn_id` is null (no lock), yet `backfill.max_active_runs` is "
                             f"{self.backfill.max_active_runs}: so many backfill runs are so many writers; {fix}, "
                             "or set `backfill.max_active_runs: 1`")

    def _non_blocking_needs(self) -> None:
        """Hudi's non-blocking concurrency control: writers append to one file group at once, which needs a
        MERGE_ON_READ table whose simple bucket index puts a key's every version in one file group."""
        mode = self.hoodie_conf.get(WriteConfig.CONCURRENCY_MODE.name, "").strip().upper()
        if self.zookeeper_conn_id:
            try:
                mode = multi_writer_mode(mode)
            except ConfigError as e:
                raise ValueError(str(e)) from None
        if mode != NON_BLOCKING:
            return
        needs = []
        if self.table_type != "MERGE_ON_READ":
            needs.append("`table_type: MERGE_ON_READ`")
        if not is_simple_bucket_index(self.hoodie_conf):
            needs.append(f"{IndexConfig.TYPE.name}=BUCKET with {IndexConfig.BUCKET_ENGINE.name}=SIMPLE (the default)")
        if self.zookeeper_conn_id is None:
            needs.append("a zookeeper_conn_id (its writers still take the lock to commit)")
        if self.services and self.services.clustering is not None:
            needs.append("no clustering service (a simple bucket index's file groups are fixed)")
        if needs:
            raise ValueError(f"{WriteConfig.CONCURRENCY_MODE.name}={NON_BLOCKING} needs " + ", ".join(needs))


DAG_SECTIONS = ("ingest", "backfill", "services", "restore")
#: a table's name goes into its DAGs' ids (`hudi_services__<table>`), which Airflow takes up to 250 characters of
TABLE_NAME = re.compile(r"^[\w.-]{1,235}$")


class TablesConfig(BaseModel):
    """The tables the config defines well, and those it refused: table -> why, naming the key and the fix."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    tables: dict[str, TableConfig]
    refused: dict[str, str] = Field(default_factory=dict)
    services_groups: dict[str, ServicesGroupConfig] = Field(default_factory=dict)

    def group_members(self, group: str) -> dict[str, TableConfig]:
        return {name: t for name, t in self.tables.items() if t.services and t.services.group == group}

    def raise_refused(self) -> None:
        """Raise ConfigError naming every refused table, the key and the fix; nothing when none was refused."""
        if self.refused:
            raise ConfigError("; ".join(self.refused.values()))


def parse_tables_config(raw: Mapping[str, Any] | None, origin: str = "tables config") -> TablesConfig:
    """The config from its YAML data. A bad table lands in `refused` (the others are unaffected); a file
    that is no tables config at all raises ConfigError."""
    raw = raw or {}
    if not isinstance(raw, Mapping) or not isinstance(raw.get("tables"), Mapping) or not raw["tables"]:
        raise ConfigError(f"{origin} has no `tables:` mapping; add one entry per table")
    unknown = set(raw) - {"tables", "defaults", "services_groups"}
    if unknown:
        raise ConfigError(f"{origin} has unknown top-level key(s) {', '.join(sorted(unknown))}; "
                          "use `tables:`, `defaults:` and `services_groups:`")
    groups = _services_groups(raw.get("services_groups"), origin)
    defaults = raw.get("defaults") or {}
    sections = sorted(set(defaults) & set(DAG_SECTIONS)) if isinstance(defaults, Mapping) else []
    if sections:
        raise ConfigError(f"`defaults` in {origin} holds {', '.join(sections)}: a DAG's section belongs to its "
                          "table (as a default it would give every table that DAG); set it under each table")
    tables, refused = {}, {}
    for key, table in raw["tables"].items():
        name = str(key)
        try:
            tables[name] = _table(name, table, defaults)
            group = tables[name].services.group if tables[name].services else None
            if group is not None and group not in groups:
                del tables[name]
                raise ValueError(f"`services.group` {group!r} is not a key of `services_groups`; add it there "
                                 f"({', '.join(groups) or 'there are none'}), or drop `group`")
        except ValueError as e:
            refused[name] = f"table {name!r} in {origin}: {e}"
    _one_watcher_per_topic(tables, refused, origin)
    return TablesConfig(tables=tables, refused=refused, services_groups=groups)


def _one_watcher_per_topic(tables: dict[str, TableConfig], refused: dict[str, str], origin: str) -> None:
    """The Kafka provider's message-queue trigger consumes with its connection's `group.id`: two tables
    watching one topic through one connection would share its partitions, each missing the other's
    wake-ups. The later table is refused."""
    watching: dict[tuple[str, str], str] = {}
    for name, table in list(tables.items()):
        ingest = table.ingest
        if ingest is None or not ingest.on_new_messages:
            continue
        for topic in ingest.topics:
            first = watching.setdefault((ingest.kafka_conn_id, topic), name)
            if first != name:
                del tables[name]
                refused[name] = (f"table {name!r} in {origin}: `on_new_messages` on topic {topic!r} through "
                                 f"connection {ingest.kafka_conn_id!r}, which table {first!r} watches too: their "
                                 "triggers would share the connection's consumer group; give this table a Kafka "
                                 "connection of its own (another group.id)")
                break


def _services_groups(raw: Any, origin: str) -> dict[str, ServicesGroupConfig]:
    """The groups, each checked as a whole: a bad group fails the file (its tables could not run their
    services anywhere, and no other DAG would say why)."""
    if raw is None:
        return {}
    if not isinstance(raw, Mapping):
        raise ConfigError(f"`services_groups` in {origin} is a {type(raw).__name__}; give a mapping of group "
                          "name to {budget, policy, schedule}")
    groups = {}
    for key, group in raw.items():
        name = str(key)
        if not TABLE_NAME.match(name):
            raise ConfigError(f"services group {name!r} in {origin}: its name names its DAG, and Airflow takes "
                              "letters, digits, '_', '.' and '-' only; rename it")
        try:
            groups[name] = ServicesGroupConfig.model_validate(group or {})
        except ValidationError as e:
            raise ConfigError(f"services group {name!r} in {origin}: {_describe(e)}") from None
    return groups


def _table(name: str, table: Any, defaults: Mapping[str, Any]) -> TableConfig:
    if not TABLE_NAME.match(name):
        raise ValueError("its name names its DAGs, and Airflow takes letters, digits, '_', '.' and '-' only, "
                         "up to 235 of them here; rename the table (its `base_path` stays)")
    if table is not None and not isinstance(table, Mapping):
        raise ValueError(f"it is a {type(table).__name__}, not a mapping of settings")
    try:
        return TableConfig.model_validate({**defaults, **(table or {})})
    except ValidationError as e:
        raise ValueError(_describe(e)) from None


#: libyaml's safe loader (PyYAML's wheels bundle it), some ten times the pure-Python one's speed: a
#: thousand tables' config is read at every parse of the DAG file
_SAFE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def read_tables_config(path: str | Path) -> TablesConfig:
    try:
        raw = yaml.load(Path(path).read_text(), Loader=_SAFE_LOADER)
    except (OSError, yaml.YAMLError) as e:
        raise ConfigError(f"cannot read the tables config {path}: {e}") from e
    return parse_tables_config(raw, str(path))


def _describe(error: ValidationError) -> str:
    out = []
    for e in error.errors():
        where = ".".join(str(p) for p in e["loc"])
        given = f" (given: {e['input']!r})" if e["type"] not in ("missing", "value_error") else ""
        if e["type"] == "extra_forbidden":
            out.append(f"unknown key `{where}`; every key is in docs/tables-config.md")
        elif e["type"] == "missing":
            out.append(f"`{where}` is missing; add it")
        else:
            message = e["msg"].removeprefix("Value error, ")
            out.append(f"`{where}`: {message}{given}" if where else message)
    return "; ".join(out)


TABLES_CONFIG_ENV = "HUDI_OPS_TABLES_CONFIG"


def tables_config_path(dags_folder: str | Path) -> Path:
    """`$HUDI_OPS_TABLES_CONFIG`, else `tables.yaml` in the dags folder: where the DAGs and the view look."""
    return Path(os.environ.get(TABLES_CONFIG_ENV) or Path(dags_folder) / "tables.yaml")
