"""The table a job writes: its flags, the job's options and the table's hoodie.properties, reconciled.

Each setting may come from a flag, an option (`--props`, `--hoodie-conf`, the tables config) or, once
the table exists, its hoodie.properties. Given twice with different values it is bad input, caught
here, before Hudi starts, naming both places and the fix.
"""

from __future__ import annotations

import posixpath
from collections.abc import Mapping
from dataclasses import dataclass

import pyarrow as pa

from hudi_ops.errors import ConfigError, InvalidInputError, TableNotFoundError
from hudi_ops.format.meta_client import MetaClient
from hudi_ops.format.table_properties import TableProperties
from hudi_ops.job_specs.writes import TABLE_TYPES
from hudi_ops.options.keys import DataSourceWriteConfig, TableConfigKeys, WriteConfig
from hudi_ops.storage import Storage

#: Hudi's datasource keys the job sets from the table
TABLE_NAME = WriteConfig.TABLE_NAME.name
TABLE_TYPE = DataSourceWriteConfig.TABLE_TYPE.name
RECORD_KEY = DataSourceWriteConfig.RECORD_KEY.name
PARTITION_PATH = DataSourceWriteConfig.PARTITION_PATH.name
ORDERING = DataSourceWriteConfig.ORDERING.name
ORDERING_ALIASES = DataSourceWriteConfig.ORDERING.aliases
#: the table config's own key: Hudi 1.1.1's write config reads the type from it alone, and a new
#: table's first write with non-blocking concurrency control is refused as COPY_ON_WRITE without it
TABLE_CONFIG_TYPE = TableConfigKeys.TYPE.name


@dataclass(frozen=True)
class TargetTable:
    base_path: str
    name: str
    table_type: str
    record_key_fields: tuple[str, ...]
    partition_fields: tuple[str, ...]
    ordering_field: str | None
    schema: pa.Schema | None  # the table's columns as its latest commit recorded them; None when new

    @property
    def exists(self) -> bool:
        return self.schema is not None

    def takes_column(self, name: str) -> bool:
        """Whether the table is partitioned by the column or already has it."""
        return name in self.partition_fields or (self.schema is not None and name in self.schema.names)

    def hudi_options(self) -> dict[str, str]:
        out = {TABLE_NAME: self.name, TABLE_TYPE: self.table_type, TABLE_CONFIG_TYPE: self.table_type,
               RECORD_KEY: ",".join(self.record_key_fields), PARTITION_PATH: ",".join(self.partition_fields)}
        if self.ordering_field:
            out[ORDERING] = self.ordering_field
        return out


def _fields(text: str | None) -> tuple[str, ...] | None:
    return None if text is None else tuple(f.strip() for f in text.split(",") if f.strip())


class _Settings:
    """One setting's values by origin; `value` is the one they agree on."""

    def __init__(self, flag: str, key: str, base_path: str) -> None:
        self.flag, self.key, self.base_path = flag, key, base_path
        self.given: list[tuple[str, object]] = []

    def add(self, origin: str, value: object) -> _Settings:
        if value is not None:
            self.given.append((origin, value))
        return self

    def value(self) -> object:
        distinct = {v for _, v in self.given}
        if len(distinct) > 1:
            said = "; ".join(f"{origin} says {_show(v)}" for origin, v in self.given)
            raise ConfigError(f"{self.flag} / {self.key} disagree for {self.base_path}: {said}; "
                              "give one value, the table's if the table exists")
        return self.given[0][1] if self.given else None


def _show(value: object) -> str:
    text = ",".join(value) if isinstance(value, tuple) else str(value)
    return text or "(none)"


def resolve_target(
    base_path: str, options: Mapping[str, str], *, table_name: str | None = None, table_type: str | None = None,
    record_key: str | None = None, partition_path: str | None = None, ordering_field: str | None = None,
) -> TargetTable:
    meta: MetaClient | None
    try:
        meta = MetaClient.open(base_path)
    except TableNotFoundError:
        meta = None
    props: TableProperties | None = meta.properties if meta else None
    table = "the table's hoodie.properties"

    def setting(flag: str, key: str, flag_value: object, option: object, stored: object) -> object:
        s = _Settings(flag, key, base_path).add(flag, flag_value).add(f"option {key}", option)
        return s.add(table, stored if props else None).value()

    ordering_option = next((options[k] for k in (ORDERING, *ORDERING_ALIASES) if options.get(k)), None)
    name = setting("--target-table", TABLE_NAME, table_name, options.get(TABLE_NAME),
                   props.table_name if props else None)
    kind = setting("--table-type", TABLE_TYPE, table_type and table_type.upper(),
                   (options.get(TABLE_TYPE) or "").upper() or None, props.table_type if props else None)
    keys = setting("--record-key-field", RECORD_KEY, _fields(record_key), _fields(options.get(RECORD_KEY)),
                   props.record_key_fields if props else None)
    parts = setting("--partition-path-field", PARTITION_PATH, _fields(partition_path),
                    _fields(options.get(PARTITION_PATH)), props.partition_fields if props else None)
    ordering = _Settings("--source-ordering-field", ORDERING, base_path).add("--source-ordering-field", ordering_field)
    ordering.add(f"option {ORDERING}", ordering_option)
    if props:
        ordering.add(table, props.ordering_field or "")  # a table without one refuses one
    order = ordering.value() or None

    if not keys:
        raise InvalidInputError(f"no table at {base_path} yet, and no record key to create it with; give "
                                "--record-key-field (the source's key column)")
    kind = kind or "COPY_ON_WRITE"
    if kind not in TABLE_TYPES:
        raise InvalidInputError(f"unknown table type {kind!r}; use one of {', '.join(TABLE_TYPES)}")
    schema = None
    if meta is not None:
        schema = meta.table_schema() or pa.schema([])
    return TargetTable(
        base_path=base_path, name=str(name or posixpath.basename(Storage.for_uri(base_path).root.rstrip("/"))),
        table_type=str(kind), record_key_fields=tuple(keys),  # type: ignore[arg-type]
        partition_fields=tuple(parts or ()), ordering_field=str(order) if order else None,  # type: ignore[arg-type]
        schema=schema,
    )
