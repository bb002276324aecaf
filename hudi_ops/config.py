"""Typed `hoodie.*` configuration keys with Hudi's names and defaults, and their resolution.

Precedence, lowest first: Hudi's defaults < hoodie.properties < the tables config < --props file <
--hoodie-conf / Airflow params.
`HoodieConfig` is an immutable mapping of raw strings; `get(KEY)` parses and validates one key.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from hudi_ops.errors import ConfigError

T = TypeVar("T")


def _parse_bool(text: str) -> bool:
    low = text.strip().lower()
    if low in ("true", "1", "yes"):
        return True
    if low in ("false", "0", "no"):
        return False
    raise ValueError("expected true or false")


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



def bool_key(name: str, default: bool | None, doc: str = "", **kw: object) -> ConfigKey[bool]:
    return ConfigKey(name, default, _parse_bool, doc, **kw)  # type: ignore[arg-type]


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

    def get_raw(self, name: str) -> str | None:
        return self.values.get(name)

    def __contains__(self, name: object) -> bool:
        return name in self.values

    def merged(self, *overrides: Mapping[str, str] | None) -> HoodieConfig:
        """A new config where later mappings win over earlier ones and over this one."""
        out = dict(self.values)
        for o in overrides:
            if o:
                out.update({k: str(v) for k, v in o.items()})
        return HoodieConfig(out)

    def with_values(self, **pairs: str) -> HoodieConfig:
        return self.merged(pairs)


def parse_key_values(items: Iterable[str]) -> dict[str, str]:
    """Parse `k=v` strings (the CLI's --hoodie-conf) into a dict, naming the malformed one."""
    out: dict[str, str] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise ConfigError(f"--hoodie-conf {item!r} is not key=value; write e.g. hoodie.table.name=trips")
        out[key.strip()] = value.strip()
    return out


def command_line_options(props_path: str | None, hoodie_conf: Iterable[str]) -> dict[str, str]:
    """A `--props` file, then `--hoodie-conf k=v` pairs (later wins), as Hudi's utilities read them."""
    out: dict[str, str] = {}
    if props_path:
        try:
            with open(props_path) as f:
                out.update(load_props_file(f.read()))
        except OSError as e:
            raise ConfigError(f"cannot read --props {props_path!r}: {e.strerror or e}") from None
    out.update(parse_key_values(hoodie_conf))
    return out


def load_props_file(text: str) -> dict[str, str]:
    """Parse a Java-properties style --props file (`k=v` lines, `#` comments)."""
    out: dict[str, str] = {}
    for line in text.splitlines():
        s = line.strip()
        if not s or s.startswith(("#", "!")):
            continue
        key, _, value = s.partition("=")
        out[key.strip()] = value.strip()
    return out


class WriteConfig:
    """Writer keys the control plane reads (HoodieWriteConfig's names and defaults)."""

    TABLE_NAME = str_key("hoodie.table.name", aliases=("hoodie.datasource.write.table.name",))
    LOCK_WAIT_MS = int_key("hoodie.write.lock.wait_time_ms", 60_000, "how long a writer waits for the table lock",
                           minimum=0)


class TableConfigKeys:
    """Keys stored in hoodie.properties (HoodieTableConfig) with Hudi 1.0's names."""

    NAME = str_key("hoodie.table.name")
    TYPE = str_key("hoodie.table.type", "COPY_ON_WRITE", choices=("COPY_ON_WRITE", "MERGE_ON_READ"))
    VERSION = int_key("hoodie.table.version", None)
    INITIAL_VERSION = int_key("hoodie.table.initial.version", None)
    TIMELINE_LAYOUT_VERSION = int_key("hoodie.timeline.layout.version", None)
    TIMELINE_PATH = str_key("hoodie.timeline.path", "timeline")
    TIMELINE_HISTORY_PATH = str_key("hoodie.timeline.history.path", "history")
    ARCHIVELOG_FOLDER = str_key("hoodie.archivelog.folder", "archived")
    RECORD_KEY_FIELDS = list_key("hoodie.table.recordkey.fields")
    PARTITION_FIELDS = list_key("hoodie.table.partition.fields")
    PRECOMBINE_FIELD = str_key("hoodie.table.precombine.field", aliases=("hoodie.table.ordering.fields",))
    KEYGEN_TYPE = str_key("hoodie.table.keygenerator.type")
    KEYGEN_CLASS = str_key("hoodie.table.keygenerator.class")
    HIVE_STYLE_PARTITIONING = bool_key("hoodie.datasource.write.hive_style_partitioning", False)
    URL_ENCODE_PARTITIONING = bool_key("hoodie.datasource.write.partitionpath.urlencode", False)
    DROP_PARTITION_COLUMNS = bool_key("hoodie.datasource.write.drop.partition.columns", False)
    POPULATE_META_FIELDS = bool_key("hoodie.populate.meta.fields", True)
    RECORD_MERGE_MODE = str_key("hoodie.record.merge.mode")
    RECORD_MERGE_STRATEGY_ID = str_key("hoodie.record.merge.strategy.id")
    PAYLOAD_CLASS = str_key("hoodie.compaction.payload.class")
    TIMELINE_TIMEZONE = str_key("hoodie.table.timeline.timezone", "LOCAL")
    DATABASE_NAME = str_key("hoodie.database.name")
    CREATE_SCHEMA = str_key("hoodie.table.create.schema")
    BASE_FILE_FORMAT = str_key("hoodie.table.base.file.format", "PARQUET")
    METADATA_PARTITIONS = list_key("hoodie.table.metadata.partitions")
    METADATA_PARTITIONS_INFLIGHT = list_key("hoodie.table.metadata.partitions.inflight")
    CHECKSUM = int_key("hoodie.table.checksum", None)
