"""Every `hoodie.*` key hudi-ops reads or sets, typed, with Hudi's exact name, its default and its older names,
grouped as Hudi's config classes group them (hudi_ops.options says in what order a job's options apply)."""

from __future__ import annotations

from collections.abc import Mapping

from hudi_ops.options.config_property import ConfigKey, HoodieConfig, int_key, list_key, parse_list, str_key


class WriteConfig:
    """Writer keys (HoodieWriteConfig's names and defaults)."""

    TABLE_NAME = str_key("hoodie.table.name", aliases=("hoodie.datasource.write.table.name",))
    CONCURRENCY_PREFIX = "hoodie.write.concurrency."
    SET_NULL_FOR_MISSING_COLUMNS = str_key("hoodie.write.set.null.for.missing.columns", "FALSE",
                                           "a column the input lacks is written null", choices=("TRUE", "FALSE"))
    AVRO_SCHEMA = str_key("hoodie.avro.schema", doc="the write's Avro schema (JSON)")
    EMBEDDED_TIMELINE_SERVER = str_key("hoodie.embed.timeline.server", "TRUE",
                                       "the driver serves the file system view to the executors",
                                       choices=("TRUE", "FALSE"))
    #: each write operation's shuffle parallelism (0: Hudi's choice, from the input)
    SHUFFLE_PARALLELISM = tuple(int_key(f"hoodie.{op}.shuffle.parallelism", 0, minimum=0)
                                for op in ("upsert", "insert", "bulkinsert", "delete"))
    CONCURRENCY_MODE = str_key("hoodie.write.concurrency.mode", "SINGLE_WRITER", "how writers share the table",
                               choices=("SINGLE_WRITER", "OPTIMISTIC_CONCURRENCY_CONTROL",
                                        "NON_BLOCKING_CONCURRENCY_CONTROL"))
    HIVE_STYLE_PARTITIONING = str_key("hoodie.datasource.write.hive_style_partitioning", "FALSE",
                                      "partition folders named `field=value`", choices=("TRUE", "FALSE"))


class TableConfigKeys:
    """The keys of hoodie.properties (HoodieTableConfig) the control plane reads, with Hudi 1.0's names."""

    NAME = str_key(WriteConfig.TABLE_NAME.name)
    TYPE = str_key("hoodie.table.type", "COPY_ON_WRITE", choices=("COPY_ON_WRITE", "MERGE_ON_READ"))
    VERSION = int_key("hoodie.table.version", None)
    TIMELINE_LAYOUT_VERSION = int_key("hoodie.timeline.layout.version", None)
    TIMELINE_PATH = str_key("hoodie.timeline.path", "timeline")
    TIMELINE_HISTORY_PATH = str_key("hoodie.timeline.history.path", "history")
    ARCHIVE_LOG_FOLDER = str_key("hoodie.archivelog.folder", "archived", "layout 1's archived timeline, in .hoodie")
    RECORD_KEY_FIELDS = list_key("hoodie.table.recordkey.fields")
    PARTITION_FIELDS = list_key("hoodie.table.partition.fields")
    ORDERING_FIELDS = str_key("hoodie.table.ordering.fields", doc="v9's name for the precombine field")
    PRECOMBINE_FIELD = str_key("hoodie.table.precombine.field", aliases=(ORDERING_FIELDS.name,))
    KEY_GENERATOR_CLASS = str_key("hoodie.table.keygenerator.class")  # what Hudi 0.x writes
    KEY_GENERATOR_TYPE = str_key("hoodie.table.keygenerator.type")  # what Hudi 1.x writes instead
    DATABASE_NAME = str_key("hoodie.database.name")
    CREATE_SCHEMA = str_key("hoodie.table.create.schema")
    METADATA_PARTITIONS = list_key("hoodie.table.metadata.partitions")
    CHECKSUM = int_key("hoodie.table.checksum", None)
    TIMELINE_TIMEZONE = str_key("hoodie.table.timeline.timezone", "LOCAL", "the zone of instant times",
                                choices=("LOCAL", "UTC"))
    CDC_ENABLED = str_key("hoodie.table.cdc.enabled", "FALSE", "the table keeps change data (CDC) logs",
                          choices=("TRUE", "FALSE"))
    POPULATE_META_FIELDS = str_key("hoodie.populate.meta.fields", "TRUE",
                                   "every record carries Hudi's meta fields (its key, partition path, file name)",
                                   choices=("TRUE", "FALSE"))


class LockConfig:
    """The lock writers and services take (HoodieLockConfig's names); the ZooKeeper provider's keys follow."""

    PREFIX = "hoodie.write.lock."
    WAIT_MS = int_key("hoodie.write.lock.wait_time_ms", 60_000, "how long a writer waits for the table lock",
                      minimum=0)
    PROVIDER = str_key("hoodie.write.lock.provider", doc="the lock provider's class")
    CONFLICT_RESOLUTION_STRATEGY = str_key("hoodie.write.lock.conflict.resolution.strategy",
                                           doc="which of two overlapping writes a commit refuses")
    CLIENT_NUM_RETRIES = int_key("hoodie.write.lock.client.num_retries", 50,
                                 "how often Hudi's lock manager asks again for a lock it did not get", minimum=0)


# -- the ZooKeeper lock provider's (LockConfiguration's names and defaults) --------------

ZK_URL = str_key(
    "hoodie.write.lock.zookeeper.url", doc="ZooKeeper connect string (host:port[,host:port...][/chroot])"
)
ZK_PORT = int_key(
    "hoodie.write.lock.zookeeper.port", None, "port appended to hosts of the url that have none", minimum=1,
    below=65_536,
)
ZK_BASE_PATH = str_key("hoodie.write.lock.zookeeper.base_path", doc="persistent znode under which locks live")
ZK_LOCK_KEY = str_key("hoodie.write.lock.zookeeper.lock_key", doc="lock znode name; defaults to the table's name")
ZK_SESSION_TIMEOUT_MS = int_key("hoodie.write.lock.zookeeper.session_timeout_ms", 60_000, minimum=1)
ZK_CONNECTION_TIMEOUT_MS = int_key("hoodie.write.lock.zookeeper.connection_timeout_ms", 15_000, minimum=1)
LOCK_RETRY_WAIT_MS = int_key(
    "hoodie.write.lock.wait_time_ms_between_retry", 1_000, "first pause of the ZooKeeper retry backoff", minimum=0
)
LOCK_RETRY_MAX_WAIT_MS = int_key(
    "hoodie.write.lock.max_wait_time_ms_between_retry", 16_000, "cap of the ZooKeeper retry backoff", minimum=0
)
LOCK_NUM_RETRIES = int_key("hoodie.write.lock.num_retries", 15, "retries of a ZooKeeper connect or call", minimum=0)


class DataSourceWriteConfig:
    """The Spark datasource's write options (DataSourceWriteOptions' names)."""

    TABLE_TYPE = str_key("hoodie.datasource.write.table.type", "COPY_ON_WRITE",
                         choices=("COPY_ON_WRITE", "MERGE_ON_READ"))
    RECORD_KEY = str_key("hoodie.datasource.write.recordkey.field")
    PARTITION_PATH = str_key("hoodie.datasource.write.partitionpath.field")
    #: the ordering (precombine) field; Hudi 1.x's table properties name it the ordering fields
    ORDERING = str_key("hoodie.datasource.write.precombine.field",
                       aliases=(TableConfigKeys.ORDERING_FIELDS.name, TableConfigKeys.PRECOMBINE_FIELD.name))
    OPERATION = str_key("hoodie.datasource.write.operation", "UPSERT")
    COMMIT_METADATA_PREFIX = str_key("hoodie.datasource.write.commitmeta.key.prefix", "_",
                                     "options with this prefix go into the commit's extra metadata")
    PARTITIONS_TO_DELETE = list_key("hoodie.datasource.write.partitions.to.delete",
                                    doc="DELETE_PARTITION's partitions, comma-separated")
    #: HoodieInternalConfig's, which Spark SQL sets for a static-partition INSERT OVERWRITE: the partitions an
    #: insert_overwrite replaces, those its rows leave empty among them (without it: the partitions its rows hold)
    STATIC_OVERWRITE_PARTITIONS = list_key("hoodie.static.overwrite.partition.paths",
                                           doc="the partitions an insert_overwrite replaces, comma-separated")


class DataSourceReadConfig:
    """The Spark datasource's read options (DataSourceReadOptions' names), and hudi-rs' one hudi-ops sets."""

    QUERY_TYPE = str_key("hoodie.datasource.query.type", "snapshot",
                         choices=("SNAPSHOT", "INCREMENTAL", "READ_OPTIMIZED"))
    INCREMENTAL_FORMAT = str_key("hoodie.datasource.query.incremental.format", "latest_state",
                                 choices=("LATEST_STATE", "CDC"))
    BEGIN_INSTANTTIME = str_key("hoodie.datasource.read.begin.instanttime", doc="after this instant (exclusive)")
    END_INSTANTTIME = str_key("hoodie.datasource.read.end.instanttime", doc="up to this instant (inclusive)")
    INCR_FALLBACK_FULL_SCAN = str_key("hoodie.datasource.read.incr.fallback.fulltablescan.enable", "FALSE",
                                      "an incremental read past the archived or cleaned falls back to a full scan",
                                      choices=("TRUE", "FALSE"))
    #: hudi-rs' option: read base files alone
    USE_READ_OPTIMIZED_MODE = str_key("hoodie.read.use.read_optimized.mode", "FALSE", choices=("TRUE", "FALSE"))


class IndexConfig:
    """The index (HoodieIndexConfig's names and defaults)."""

    TYPE = str_key("hoodie.index.type", doc="how a key finds its file group")
    BUCKET_ENGINE = str_key("hoodie.index.bucket.engine", "SIMPLE", "a bucket index's engine",
                            choices=("SIMPLE", "CONSISTENT_HASHING"))


class CleanConfig:
    """The cleaner's keys (HoodieCleanConfig's names and defaults)."""

    POLICY = str_key("hoodie.cleaner.policy", "KEEP_LATEST_COMMITS", "which file slices a clean keeps",
                     choices=("KEEP_LATEST_COMMITS", "KEEP_LATEST_FILE_VERSIONS", "KEEP_LATEST_BY_HOURS"))
    COMMITS_RETAINED = int_key("hoodie.cleaner.commits.retained", 10, "KEEP_LATEST_COMMITS: commits kept readable",
                               minimum=0)
    FILE_VERSIONS_RETAINED = int_key("hoodie.cleaner.fileversions.retained", 3,
                                     "KEEP_LATEST_FILE_VERSIONS: slices kept per file group", minimum=1)
    HOURS_RETAINED = int_key("hoodie.cleaner.hours.retained", 24, "KEEP_LATEST_BY_HOURS: hours kept readable",
                             minimum=0)
    AUTOMATIC = str_key("hoodie.clean.automatic", "TRUE", "writers clean after their commits",
                        choices=("TRUE", "FALSE"))


class ArchivalConfig:
    """The archiver's trigger (HoodieArchivalConfig's name and default): beyond `max` completed commits
    on the active timeline it archives (down to `hoodie.keep.min.commits`, raised to keep what the
    cleaner retains)."""

    MAX_COMMITS_TO_KEEP = int_key("hoodie.keep.max.commits", 30, "completed commits that start an archival",
                                  minimum=1)
    AUTOMATIC = str_key("hoodie.archive.automatic", "TRUE", "writers archive after their commits",
                        choices=("TRUE", "FALSE"))


class HeartbeatConfig:
    """A writer's heartbeat (HoodieWriteConfig's names and defaults): a pending instant whose last
    beat is older than interval x tolerable misses belongs to a failed writer."""

    PREFIX = "hoodie.client.heartbeat."
    INTERVAL_MS = int_key("hoodie.client.heartbeat.interval_in_ms", 60_000, minimum=1)
    TOLERABLE_MISSES = int_key("hoodie.client.heartbeat.tolerable.misses", 2, minimum=0)


class CompactionConfig:
    """The compaction trigger's keys (HoodieCompactionConfig's names and defaults)."""

    TRIGGER_STRATEGY = str_key("hoodie.compact.inline.trigger.strategy", "NUM_COMMITS",
                               choices=("NUM_COMMITS", "NUM_COMMITS_AFTER_LAST_REQUEST", "TIME_ELAPSED",
                                        "NUM_AND_TIME", "NUM_OR_TIME"))
    MAX_DELTA_COMMITS = int_key("hoodie.compact.inline.max.delta.commits", 5,
                                "deltacommits since the last compaction that make one due", minimum=1)
    INLINE = str_key("hoodie.compact.inline", "FALSE", "writers compact after their commits",
                     choices=("TRUE", "FALSE"))
    SCHEDULE_INLINE = str_key("hoodie.compact.schedule.inline", "FALSE", "writers plan compactions",
                              choices=("TRUE", "FALSE"))
    PARQUET_SMALL_FILE_LIMIT = int_key("hoodie.parquet.small.file.limit", 104_857_600,
                                       "inserts fill base files below this size first (0: never)", minimum=0)


class ClusteringConfig:
    """The size-based clustering plan strategy's keys (HoodieClusteringConfig's names and defaults)."""

    SMALL_FILE_LIMIT = int_key("hoodie.clustering.plan.strategy.small.file.limit", 300 * 1024 * 1024,
                               "base files below this size are clustering candidates", minimum=0)
    SORT_COLUMNS = str_key("hoodie.clustering.plan.strategy.sort.columns", doc="columns clustering sorts by")
    SINGLE_GROUP = str_key("hoodie.clustering.plan.strategy.single.group.clustering.enabled", "TRUE",
                           "whether one candidate file group alone gets a plan", choices=("TRUE", "FALSE"))
    INLINE = str_key("hoodie.clustering.inline", "FALSE", "writers cluster after their commits",
                     choices=("TRUE", "FALSE"))
    SCHEDULE_INLINE = str_key("hoodie.clustering.schedule.inline", "FALSE", "writers plan clusterings",
                              choices=("TRUE", "FALSE"))
    UPDATES_STRATEGY = str_key("hoodie.clustering.updates.strategy",
                               doc="what a write to a file group a pending clustering plan rewrites does")
    INCREMENTAL = str_key("hoodie.table.services.incremental.enabled", "TRUE",
                          "plan only partitions written since the service last ran", choices=("TRUE", "FALSE"))


class FailedWritesConfig:
    """How failed writes are rolled back (HoodieCleanConfig): EAGER by the next write, LAZY (every
    multi-writer table) by a clean once their heartbeat expired."""

    POLICY = str_key("hoodie.cleaner.policy.failed.writes", "EAGER", choices=("EAGER", "LAZY", "NEVER"))




HIVE_SYNC_TOOL = "org.apache.hudi.hive.HiveSyncTool"


class MetaSyncConfig:
    """Hudi's catalog sync (HoodieSyncConfig and HiveSyncConfigHolder's names and defaults): the table's
    schema and partitions registered in a Hive Metastore after its commits (hudi_ops.spark.jobs.meta_sync)."""

    ENABLED = str_key("hoodie.datasource.meta.sync.enable", "FALSE", "sync the table to a catalog after commits",
                      choices=("TRUE", "FALSE"), aliases=("hoodie.datasource.hive_sync.enable",))
    MODE = str_key("hoodie.datasource.hive_sync.mode", "HMS", "how Hudi reaches the metastore",
                   choices=("HMS", "JDBC", "HIVEQL"))
    METASTORE_URIS = str_key("hoodie.datasource.hive_sync.metastore.uris", doc="the metastore's thrift://host:port")
    DATABASE = str_key("hoodie.datasource.hive_sync.database", "default", "the catalog's database")
    TABLE = str_key("hoodie.datasource.hive_sync.table", doc="the catalog's table (default: the Hudi table's name)")
    PARTITION_FIELDS = list_key("hoodie.datasource.hive_sync.partition_fields",
                                doc="the catalog's partition columns (default: the table's partition fields)")
    INCREMENTAL = str_key("hoodie.meta.sync.incremental", "TRUE",
                          "sync only the partitions commits since the last sync wrote (FALSE: compare all)",
                          choices=("TRUE", "FALSE"))
    BASE_PATH = str_key("hoodie.datasource.meta.sync.base.path", doc="the table to sync")
    TOOL_CLASSES = ConfigKey("hoodie.meta.sync.client.tool.class", (HIVE_SYNC_TOOL,), parse_list,
                             "Hudi's sync tools, comma-separated (AWS Glue's: org.apache.hudi.aws.sync."
                             "AwsGlueCatalogSyncTool, in hudi-aws-bundle)")

    @classmethod
    def enabled(cls, options: Mapping[str, str]) -> bool:
        return HoodieConfig(dict(options)).get(cls.ENABLED) == "TRUE"


class MetricsConfig:
    """Hudi's metrics reporters (HoodieMetricsConfig and HoodieMetricsPrometheusConfig's names and defaults):
    what a commit, a clean, a compaction did, pushed by the job's JVM."""

    PREFIX = "hoodie.metrics."  # every key of Hudi's metrics
    ON = str_key("hoodie.metrics.on", "FALSE", "turn Hudi's metrics on", choices=("TRUE", "FALSE"))
    REPORTER_TYPE = str_key("hoodie.metrics.reporter.type", "GRAPHITE", "where Hudi reports its metrics",
                            choices=("GRAPHITE", "INMEMORY", "JMX", "DATADOG", "CONSOLE", "PROMETHEUS_PUSHGATEWAY",
                                     "PROMETHEUS", "CLOUDWATCH", "M3"))
    PUSHGATEWAY_HOST = str_key("hoodie.metrics.pushgateway.host", "localhost", "the push gateway's host")
    PUSHGATEWAY_PORT = int_key("hoodie.metrics.pushgateway.port", 9091, "the push gateway's port")
    PUSHGATEWAY_JOB_NAME = str_key("hoodie.metrics.pushgateway.job.name", "",
                                   "the push gateway's group (its `job` label) the job pushes to")
    PUSHGATEWAY_RANDOM_SUFFIX = str_key("hoodie.metrics.pushgateway.random.job.name.suffix", "TRUE",
                                        "a random number after the job name: a group per JVM",
                                        choices=("TRUE", "FALSE"))
    PUSHGATEWAY_DELETE_ON_SHUTDOWN = str_key("hoodie.metrics.pushgateway.delete.on.shutdown", "TRUE",
                                             "delete the group from the gateway when the JVM ends",
                                             choices=("TRUE", "FALSE"))


class PreCommitValidatorConfig:
    """Hudi's SQL pre-commit validators (HoodiePreCommitValidatorConfig's names): queries over the table as
    the commit would leave it (`<TABLE_NAME>`), a refusal aborting the commit."""

    VALIDATORS = list_key("hoodie.precommit.validators", doc="the validators' classes, comma-separated")
    SINGLE_VALUE = str_key("hoodie.precommit.validators.single.value.sql.queries",
                           doc="`query#expected;...`: each query's one value after the commit")
    EQUALITY = str_key("hoodie.precommit.validators.equality.sql.queries",
                       doc="`query;...`: each query's result unchanged by the commit")
    INEQUALITY = str_key("hoodie.precommit.validators.inequality.sql.queries",
                         doc="`query;...`: each query's result changed by the commit")
    TABLE_VARIABLE = "<TABLE_NAME>"
    #: the tables config's kinds: (kind, Hudi's validator class, the key of its queries)
    KINDS = (("single_result", "org.apache.hudi.client.validator.SqlQuerySingleResultPreCommitValidator",
              SINGLE_VALUE),
             ("equality", "org.apache.hudi.client.validator.SqlQueryEqualityPreCommitValidator", EQUALITY),
             ("inequality", "org.apache.hudi.client.validator.SqlQueryInequalityPreCommitValidator", INEQUALITY))


class StreamerConfig:
    """HoodieStreamer's options that hudi-ops' Kafka ingest takes as they are."""

    SOURCE_SCHEMA_FILE = str_key("hoodie.streamer.schemaprovider.source.schema.file",
                                 doc="the Avro schema (.avsc) of a topic's Avro values (file-based schema provider)")
    KAFKA_TOPIC = str_key("hoodie.streamer.source.kafka.topic", doc="the topic a Kafka ingest reads")
    KAFKA_MAX_EVENTS = int_key("hoodie.streamer.kafka.source.maxEvents", 0, "messages per commit at most (0: all)",
                               minimum=0)
    #: hudi-ops' default is true, where HoodieStreamer's is false and resets to the earliest offset silently
    #: (apache/hudi#5400)
    KAFKA_FAIL_ON_DATA_LOSS = str_key("hoodie.streamer.source.kafka.enable.failOnDataLoss", "TRUE",
                                      "offsets the topic no longer holds fail the run", choices=("TRUE", "FALSE"))
    TRANSFORMER_SQL = str_key("hoodie.streamer.transformer.sql", doc="SQL over <SRC> that shapes each batch")


class ErrorTableConfig:
    """Hudi's error table (HoodieErrorTableConfig's names): where an ingest puts the messages it cannot
    make rows of, instead of failing on the first."""

    ENABLED = str_key("hoodie.errortable.enable", "FALSE", "messages that cannot be read go to the error table",
                      choices=("TRUE", "FALSE"))
    BASE_PATH = str_key("hoodie.errortable.base.path", doc="the error table's base path")
    TARGET_TABLE = str_key("hoodie.errortable.target.table.name", doc="the error table's name")


# -- hudi-ops' own (read by its Java classes in the jobs' JVM) ---------------------------------------

class BatchFenceConfig:
    """The batch fence a writer holds around its batch (hudi_ops.spark.jobs.batch_fence)."""

    PATH = str_key("hoodie.write.lock.hudi_ops.fence.path", doc="the fence's znode")
    SESSION = str_key("hoodie.write.lock.hudi_ops.fence.session", doc="the ZooKeeper session that holds it")
