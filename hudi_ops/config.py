"""Typed `hoodie.*` configuration keys with Hudi's names and defaults, their resolution, and the Java
`Properties` text that hoodie.properties and `--props` files are written in.

Precedence, lowest first: Hudi's defaults < hoodie.properties < the tables config < --props file <
--hoodie-conf / Airflow params.
`HoodieConfig` is an immutable mapping of raw strings; `get(KEY)` parses and validates one key.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from hudi_ops.errors import ConfigError, InvalidTableError

T = TypeVar("T")


def _parse_list(text: str) -> tuple[str, ...]:
    return tuple(p.strip() for p in text.split(",") if p.strip())


@dataclass(frozen=True, slots=True)
class ConfigKey(Generic[T]):
    """One `hoodie.*` key: its exact name, Hudi's default, a parser and accepted older names."""

    name: str
    default: T | None
    parse: Callable[[str], T]
    doc: str = ""
    aliases: tuple[str, ...] = ()
    choices: tuple[str, ...] = ()
    minimum: float | None = None  # for numbers: the smallest accepted value
    below: float | None = None  # for numbers: values must stay under this bound

    def from_text(self, text: str) -> T:
        if self.choices and text.upper() not in self.choices:
            raise ConfigError(f"{self.name}={text!r} is not valid; use one of {', '.join(self.choices)}")
        try:
            value = self.parse(text.upper() if self.choices else text)
        except ValueError as e:
            raise ConfigError(f"{self.name}={text!r} is not valid: {e}") from None
        if self.minimum is not None and value < self.minimum:  # type: ignore[operator]
            raise ConfigError(f"{self.name}={text!r} is too small; use a value of at least {self.minimum:g}")
        if self.below is not None and value >= self.below:  # type: ignore[operator]
            raise ConfigError(f"{self.name}={text!r} is too large; use a value below {self.below:g}")
        return value


def str_key(name: str, default: str | None = None, doc: str = "", **kw: object) -> ConfigKey[str]:
    return ConfigKey(name, default, str, doc, **kw)  # type: ignore[arg-type]


def int_key(name: str, default: int | None, doc: str = "", **kw: object) -> ConfigKey[int]:
    return ConfigKey(name, default, int, doc, **kw)  # type: ignore[arg-type]


def list_key(name: str, doc: str = "", **kw: object) -> ConfigKey[tuple[str, ...]]:
    return ConfigKey(name, (), _parse_list, doc, **kw)  # type: ignore[arg-type]


@dataclass(frozen=True)
class HoodieConfig:
    """An immutable set of raw `hoodie.*` values; typed access through `get(key)`."""

    values: Mapping[str, str] = field(default_factory=dict)

    def get(self, key: ConfigKey[T]) -> T | None:
        for name in (key.name, *key.aliases):
            text = self.values.get(name)
            if text is not None and text != "":
                return key.from_text(text)
        return key.default

    def require(self, key: ConfigKey[T]) -> T:
        value = self.get(key)
        if value is None or value == ():
            raise ConfigError(f"{key.name} is required: set it with --hoodie-conf {key.name}=...")
        return value

    def with_values(self, **pairs: str) -> HoodieConfig:
        """A new config where the given values win over this one's."""
        return HoodieConfig({**self.values, **{k: str(v) for k, v in pairs.items()}})


def parse_key_values(items: Iterable[str]) -> dict[str, str]:
    """Parse `k=v` strings (the CLI's --hoodie-conf) into a dict, naming the malformed one."""
    out: dict[str, str] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise ConfigError(f"--hoodie-conf {item!r} is not key=value; write e.g. hoodie.table.name=trips")
        out[key.strip()] = value.strip()
    return out


def command_line_options(props_path: str | None, hoodie_conf: Mapping[str, str]) -> dict[str, str]:
    """A `--props` file, then the `--hoodie-conf k=v` options (they win), as Hudi's utilities read them."""
    out: dict[str, str] = {}
    if props_path:
        try:
            with open(props_path) as f:
                out.update(parse_props_file(f.read()))
        except OSError as e:
            raise ConfigError(f"cannot read --props {props_path!r}: {e.strerror or e}") from None
    out.update(hoodie_conf)
    return out


def props_file_text(options: Mapping[str, str]) -> str:
    """`options` as a `--props` file that `parse_props_file` (and Hudi's utilities) read back unchanged;
    a key or value that file cannot hold (a line break, blanks at its ends or in a row) is refused."""
    lines = []
    for key, value in sorted(options.items()):
        line = f"{key}={value}"
        if parse_props_file(line) != {key: value}:
            raise ConfigError(f"the value of option {key} cannot be written to a properties file (line breaks, or "
                              "blanks at its ends or in a row): change it, or give the setting another way")
        lines.append(f"{line}\n")
    return "".join(lines)


def parse_props_file(text: str) -> dict[str, str]:
    """A `--props` file as Hudi's utilities read it (DFSPropertiesConfiguration), which is not Java's
    `Properties`: no escapes or continuations; `#` comments; runs of blanks become one space; the key
    ends at the first `=`, or at the first blank in a line without one."""
    out: dict[str, str] = {}
    for raw in text.splitlines():
        line = " ".join(raw.split())
        if not line or line.startswith("#") or ("=" not in line and " " not in line):
            continue
        key, _, value = line.partition("=" if "=" in line else " ")
        out[key.strip()] = value.strip()
    return out


# -- Java Properties text ----------------------------------------------------------------------------

_WS = " \t\f"
_UNESCAPES = {"t": "\t", "n": "\n", "r": "\r", "f": "\f"}


def parse_properties(text: str) -> dict[str, str]:
    """Parse Java `Properties` text as `Properties.load` does; later duplicates win."""
    out: dict[str, str] = {}
    for line in _logical_lines(text):
        key, value = _split_key_value(line)
        out[key] = value
    return out


def _logical_lines(text: str) -> Iterator[str]:
    physical = re.split(r"\r\n|\r|\n", text)
    i = 0
    while i < len(physical):
        line = physical[i].lstrip(_WS)
        i += 1
        if not line or line[0] in "#!":  # comments never continue onto the next line
            continue
        if line == "\\":  # continues nothing: the next line starts afresh, comment or not (JDK 9+)
            continue
        while _continues(line):
            line = line[:-1]
            if i == len(physical):
                break
            line += physical[i].lstrip(_WS)
            i += 1
        yield line


def _continues(line: str) -> bool:
    """A line ending in an odd number of backslashes continues on the next one."""
    return (len(line) - len(line.rstrip("\\"))) % 2 == 1


def _split_key_value(line: str) -> tuple[str, str]:
    key_end, value_start, has_sep, backslash = len(line), len(line), False, False
    for i, c in enumerate(line):
        if not backslash and c in "=:":
            key_end, value_start, has_sep = i, i + 1, True
            break
        if not backslash and c in _WS:
            key_end, value_start = i, i + 1
            break
        backslash = c == "\\" and not backslash
    j = value_start
    while j < len(line):  # skip blanks and at most one separator after a blank-terminated key
        c = line[j]
        if c not in _WS:
            if has_sep or c not in "=:":
                break
            has_sep = True
        j += 1
    return _unescape(line[:key_end]), _unescape(line[j:])


def _unescape(s: str) -> str:
    if "\\" not in s:
        return s
    out: list[str] = []
    i = 0
    while i < len(s):
        c = s[i]
        i += 1
        if c != "\\":
            out.append(c)
            continue
        if i == len(s):  # a lone trailing backslash escapes nothing
            break
        c = s[i]
        i += 1
        if c == "u":
            code = s[i:i + 4]
            if len(code) < 4 or any(h not in "0123456789abcdefABCDEF" for h in code):
                raise InvalidTableError(f"malformed \\uXXXX escape in properties text {s!r}; fix the file")
            out.append(chr(int(code, 16)))
            i += 4
        else:
            out.append(_UNESCAPES.get(c, c))
    text = "".join(out)
    # \uXXXX escapes are UTF-16 code units: join surrogate pairs into one character
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")


# -- the keys ----------------------------------------------------------------------------------------


class WriteConfig:
    """Writer keys the control plane reads (HoodieWriteConfig's names and defaults)."""

    TABLE_NAME = str_key("hoodie.table.name", aliases=("hoodie.datasource.write.table.name",))
    LOCK_WAIT_MS = int_key("hoodie.write.lock.wait_time_ms", 60_000, "how long a writer waits for the table lock",
                           minimum=0)
    HIVE_STYLE_PARTITIONING = str_key("hoodie.datasource.write.hive_style_partitioning", "FALSE",
                                      "partition folders named `field=value`", choices=("TRUE", "FALSE"))


class TableConfigKeys:
    """The keys of hoodie.properties (HoodieTableConfig) the control plane reads, with Hudi 1.0's names."""

    NAME = str_key("hoodie.table.name")
    TYPE = str_key("hoodie.table.type", "COPY_ON_WRITE", choices=("COPY_ON_WRITE", "MERGE_ON_READ"))
    VERSION = int_key("hoodie.table.version", None)
    TIMELINE_LAYOUT_VERSION = int_key("hoodie.timeline.layout.version", None)
    TIMELINE_PATH = str_key("hoodie.timeline.path", "timeline")
    TIMELINE_HISTORY_PATH = str_key("hoodie.timeline.history.path", "history")
    ARCHIVE_LOG_FOLDER = str_key("hoodie.archivelog.folder", "archived", "layout 1's archived timeline, in .hoodie")
    RECORD_KEY_FIELDS = list_key("hoodie.table.recordkey.fields")
    PARTITION_FIELDS = list_key("hoodie.table.partition.fields")
    PRECOMBINE_FIELD = str_key("hoodie.table.precombine.field", aliases=("hoodie.table.ordering.fields",))
    KEY_GENERATOR_CLASS = str_key("hoodie.table.keygenerator.class")  # what Hudi 0.x writes
    KEY_GENERATOR_TYPE = str_key("hoodie.table.keygenerator.type")  # what Hudi 1.x writes instead
    DATABASE_NAME = str_key("hoodie.database.name")
    CREATE_SCHEMA = str_key("hoodie.table.create.schema")
    METADATA_PARTITIONS = list_key("hoodie.table.metadata.partitions")
    CHECKSUM = int_key("hoodie.table.checksum", None)
    TIMELINE_TIMEZONE = str_key("hoodie.table.timeline.timezone", "LOCAL", "the zone of instant times",
                                choices=("LOCAL", "UTC"))
    POPULATE_META_FIELDS = str_key("hoodie.populate.meta.fields", "TRUE",
                                   "every record carries Hudi's meta fields (its key, partition path, file name)",
                                   choices=("TRUE", "FALSE"))


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


class ArchivalConfig:
    """The archiver's trigger (HoodieArchivalConfig's name and default): beyond `max` completed commits
    on the active timeline it archives (down to `hoodie.keep.min.commits`, raised to keep what the
    cleaner retains)."""

    MAX_COMMITS_TO_KEEP = int_key("hoodie.keep.max.commits", 30, "completed commits that start an archival",
                                  minimum=1)


class HeartbeatConfig:
    """A writer's heartbeat (HoodieWriteConfig's names and defaults): a pending instant whose last
    beat is older than interval x tolerable misses belongs to a failed writer."""

    INTERVAL_MS = int_key("hoodie.client.heartbeat.interval_in_ms", 60_000, minimum=1)
    TOLERABLE_MISSES = int_key("hoodie.client.heartbeat.tolerable.misses", 2, minimum=0)


class CompactionConfig:
    """The compaction trigger's keys (HoodieCompactionConfig's names and defaults)."""

    TRIGGER_STRATEGY = str_key("hoodie.compact.inline.trigger.strategy", "NUM_COMMITS",
                               choices=("NUM_COMMITS", "NUM_COMMITS_AFTER_LAST_REQUEST", "TIME_ELAPSED",
                                        "NUM_AND_TIME", "NUM_OR_TIME"))
    MAX_DELTA_COMMITS = int_key("hoodie.compact.inline.max.delta.commits", 5,
                                "deltacommits since the last compaction that make one due", minimum=1)


class ClusteringConfig:
    """The size-based clustering plan strategy's keys (HoodieClusteringConfig's names and defaults)."""

    SMALL_FILE_LIMIT = int_key("hoodie.clustering.plan.strategy.small.file.limit", 300 * 1024 * 1024,
                               "base files below this size are clustering candidates", minimum=0)
    SORT_COLUMNS = str_key("hoodie.clustering.plan.strategy.sort.columns", doc="columns clustering sorts by")
    SINGLE_GROUP = str_key("hoodie.clustering.plan.strategy.single.group.clustering.enabled", "TRUE",
                           "whether one candidate file group alone gets a plan", choices=("TRUE", "FALSE"))
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
    TOOL_CLASSES = ConfigKey("hoodie.meta.sync.client.tool.class", (HIVE_SYNC_TOOL,), _parse_list,
                             "Hudi's sync tools, comma-separated (AWS Glue's: org.apache.hudi.aws.sync."
                             "AwsGlueCatalogSyncTool, in hudi-aws-bundle)")

    @classmethod
    def enabled(cls, options: Mapping[str, str]) -> bool:
        return HoodieConfig(dict(options)).get(cls.ENABLED) == "TRUE"


class MetricsConfig:
    """Hudi's metrics reporters (HoodieMetricsConfig and HoodieMetricsPrometheusConfig's names and defaults):
    what a commit, a clean, a compaction did, pushed by the job's JVM."""

    PREFIX = "hoodie.metrics."
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


class ErrorTableConfig:
    """Hudi's error table (HoodieErrorTableConfig's names): where an ingest puts the messages it cannot
    make rows of, instead of failing on the first."""

    ENABLED = str_key("hoodie.errortable.enable", "FALSE", "messages that cannot be read go to the error table",
                      choices=("TRUE", "FALSE"))
    BASE_PATH = str_key("hoodie.errortable.base.path", doc="the error table's base path")
    TARGET_TABLE = str_key("hoodie.errortable.target.table.name", doc="the error table's name")
