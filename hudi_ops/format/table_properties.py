"""`.hoodie/hoodie.properties`: the typed table settings of versions 6, 8, 9, from its Java `Properties` text.

Only Hudi writes the file, through its backup protocol: a reader that finds the main file missing or
damaged (a writer is updating it) falls back to `hoodie.properties.backup`, as Java's does.
"""

from __future__ import annotations

import logging
import zlib
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from hudi_ops.errors import ConfigError, InvalidTableError, TableBeingCreatedError, TableNotFoundError
from hudi_ops.format.timeline import instant_files
from hudi_ops.options.config_property import ConfigKey, HoodieConfig
from hudi_ops.options.keys import TableConfigKeys
from hudi_ops.options.properties_file import parse_properties
from hudi_ops.storage import Storage

_log = logging.getLogger(__name__)

PROPERTIES_FILE = ".hoodie/hoodie.properties"
BACKUP_FILE = ".hoodie/hoodie.properties.backup"

SUPPORTED_VERSIONS = (6, 8, 9)

_K = TableConfigKeys


def checksum(database: str | None, table_name: str) -> int:
    """`HoodieTableConfig.generateChecksum`: CRC32 of UTF-8 `<database>.<table>`, database "" if absent."""
    return zlib.crc32(f"{database or ''}.{table_name}".encode())


#: the keys every table has, with the fix for a file that lacks one
_REQUIRED = {
    _K.NAME: f"{_K.NAME.name}=<the table's name>",
    _K.TYPE: f"{_K.TYPE.name}=COPY_ON_WRITE or MERGE_ON_READ",
    _K.VERSION: f"{_K.VERSION.name}=<6, 8 or 9, as written by the Hudi release that made it>",
}


# -- typed table properties --------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class TableProperties:
    """The raw values of one `hoodie.properties`, validated, with typed accessors."""

    values: Mapping[str, str]

    def __post_init__(self) -> None:
        object.__setattr__(self, "values", MappingProxyType(dict(self.values)))
        self._validate()

    def __hash__(self) -> int:
        return hash(frozenset(self.values.items()))

    # -- reading -----------------------------------------------------------------------------------

    @classmethod
    def load(cls, storage: Storage) -> TableProperties:
        """Read the table's properties; like Java, fall back to the backup when the main file is
        missing or invalid, e.g. fails its checksum (a writer is in the middle of updating it).

        Hudi creates the file by opening it and then writing it in one stream whose last key is the
        checksum: a main file lacking a required key and the checksum, with no backup and no instant
        yet, is a table a first write is still creating."""
        first_error: InvalidTableError | None = None
        unfinished = False
        for rel in (PROPERTIES_FILE, BACKUP_FILE):
            try:
                data = storage.read_bytes(rel)
            except FileNotFoundError:
                continue
            values: Mapping[str, str] = {}
            try:
                values = parse_properties(_decode(data))
                props = cls(values)
            except InvalidTableError as e:
                first_error = first_error or InvalidTableError(f"{storage.uri_of(rel)}: {e}")
                unfinished = unfinished or (rel == PROPERTIES_FILE and _is_unfinished(values))
                continue
            if props.table_version == 6 and _K.TIMELINE_LAYOUT_VERSION.name not in props.values:
                _log.warning("%s has no %s; assuming 1, as for every table version 6",
                             storage.uri_of(rel), _K.TIMELINE_LAYOUT_VERSION.name)
            return props
        if first_error is not None:
            if unfinished and not instant_files(storage):
                raise TableBeingCreatedError(storage.uri, f"{PROPERTIES_FILE} is not yet whole ({first_error})")
            raise first_error
        raise TableNotFoundError(storage.uri, _missing(storage))

    # -- typed accessors ---------------------------------------------------------------------------

    @property
    def table_name(self) -> str:
        return self.values[_K.NAME.name]

    @property
    def database(self) -> str | None:
        return self.values.get(_K.DATABASE_NAME.name)

    @property
    def table_type(self) -> str:
        return self._get(_K.TYPE)  # type: ignore[return-value]

    @property
    def table_version(self) -> int:
        return self._get(_K.VERSION)  # type: ignore[return-value]

    @property
    def timeline_layout_version(self) -> int:
        layout = self._get(_K.TIMELINE_LAYOUT_VERSION)
        return 1 if layout is None else layout  # only version 6 may omit it (checked on load)

    @property
    def timeline_path(self) -> str:
        """Table-relative folder of the active instants: `.hoodie/<hoodie.timeline.path>` in layout 2,
        `.hoodie` itself in layout 1."""
        if self.timeline_layout_version == 1:
            return ".hoodie"
        return f".hoodie/{self._get(_K.TIMELINE_PATH)}"

    @property
    def history_path(self) -> str | None:
        """Table-relative folder of the LSM archived timeline (layout 2); None for layout 1's archive."""
        if self.timeline_layout_version == 1:
            return None
        return f"{self.timeline_path}/{self._get(_K.TIMELINE_HISTORY_PATH)}"

    @property
    def archive_path(self) -> str | None:
        """Table-relative folder of layout 1's archived timeline (log files); None for layout 2's history."""
        if self.timeline_layout_version != 1:
            return None
        return f".hoodie/{self._get(_K.ARCHIVE_LOG_FOLDER)}"

    @property
    def record_key_fields(self) -> tuple[str, ...]:
        return self._get(_K.RECORD_KEY_FIELDS)  # type: ignore[return-value]

    @property
    def partition_fields(self) -> tuple[str, ...]:
        # CustomKeyGenerator stores `field:SIMPLE` / `field:TIMESTAMP`; the column is before the colon
        raw: tuple[str, ...] = self._get(_K.PARTITION_FIELDS)  # type: ignore[assignment]
        return tuple(f for f in (p.split(":", 1)[0].strip() for p in raw) if f)

    @property
    def ordering_fields(self) -> tuple[str, ...]:
        """The precombine fields (v9: `hoodie.table.ordering.fields`), as many as the table has."""
        raw = self.values.get(_K.ORDERING_FIELDS.name) or self.values.get(_K.PRECOMBINE_FIELD.name) or ""
        return tuple(f.strip() for f in raw.split(",") if f.strip())

    @property
    def ordering_field(self) -> str | None:
        """The one precombine field. Hudi allows several; hudi-ops' control plane compares one (with a job's
        --source-ordering-field and the input's columns), so more are refused."""
        fields = self.ordering_fields
        if len(fields) > 1:
            raise InvalidTableError(
                f"the table orders records by several fields ({','.join(fields)}); hudi-ops' control plane "
                "compares one ordering field only, so its jobs cannot write this table"
            )
        return fields[0] if fields else None

    @property
    def key_generator(self) -> str | None:
        """The key generator's class (Hudi 0.x) or type (Hudi 1.x: SIMPLE, COMPLEX, TIMESTAMP, ...)."""
        return self._get(_K.KEY_GENERATOR_CLASS) or self._get(_K.KEY_GENERATOR_TYPE)  # type: ignore[return-value]

    @property
    def metadata_partitions(self) -> tuple[str, ...]:
        """Completed metadata-table partitions that readers trust for file listing."""
        return self._get(_K.METADATA_PARTITIONS)  # type: ignore[return-value]

    @property
    def create_schema(self) -> str | None:
        """The Avro schema JSON of the table at creation, without meta fields (optional)."""
        return self.values.get(_K.CREATE_SCHEMA.name) or None

    @property
    def populates_meta_fields(self) -> bool:
        """Whether each record carries Hudi's meta fields (`_hoodie_record_key`, ...): false for a table written
        with `hoodie.populate.meta.fields=false`, whose keys are only in its record key fields."""
        return self._get(_K.POPULATE_META_FIELDS) == "TRUE"

    @property
    def timeline_timezone(self) -> str:
        """LOCAL (the writers' local time) or UTC: the zone instant times are written in."""
        return self._get(_K.TIMELINE_TIMEZONE)  # type: ignore[return-value]

    # -- helpers -----------------------------------------------------------------------------------

    def _get(self, key: ConfigKey[object]) -> object:
        try:
            return HoodieConfig(self.values).get(key)
        except ConfigError as e:
            raise InvalidTableError(f"hoodie.properties: {e}") from None

    def _validate(self) -> None:
        for key, fix in _REQUIRED.items():
            if not self.values.get(key.name):
                raise InvalidTableError(f"hoodie.properties lacks the required key {key.name}; add {fix}")
        self._get(_K.TYPE)  # parse now, so a bad value fails on load and not in a later read
        version = self.table_version
        if version not in SUPPORTED_VERSIONS:
            raise InvalidTableError(
                f"{_K.VERSION.name}={version} is not supported: hudi-ops reads table versions 6, 8 and 9; "
                "upgrade the table with a Hudi writer (hoodie.write.auto.upgrade) or Hudi's CLI"
            )
        layout_key = _K.TIMELINE_LAYOUT_VERSION.name
        layout = self._get(_K.TIMELINE_LAYOUT_VERSION)
        expected = 1 if version == 6 else 2
        if layout is None and version != 6:
            raise InvalidTableError(
                f"hoodie.properties lacks {layout_key}, required for table version {version}; "
                f"add {layout_key}=2"
            )
        if layout is not None and layout != expected:
            raise InvalidTableError(
                f"{layout_key}={layout} does not match table version {version}, which uses timeline layout "
                f"{expected}; set {layout_key}={expected}"
            )
        stored = self.values.get(_K.CHECKSUM.name)
        if stored is not None:
            expected_sum = checksum(self.database, self.table_name)
            if stored.strip() != str(expected_sum):
                raise InvalidTableError(
                    f"{_K.CHECKSUM.name}={stored} does not match the CRC32 of "
                    f"'{self.database or ''}.{self.table_name}' ({expected_sum}): the file is damaged or was "
                    "edited by hand, and Java rejects it; fix hoodie.table.name / hoodie.database.name, "
                    f"or set hoodie.table.checksum={expected_sum}"
                )


def _missing(storage: Storage) -> str:
    """What a base path without hoodie.properties lacks, in the words of the error (asked only then)."""
    if storage.file_info("") is not None:
        return "it is a file, not a table's folder"
    if not storage.is_dir(""):
        return "the path does not exist"
    return f"{PROPERTIES_FILE} is missing"


def _is_unfinished(values: Mapping[str, str]) -> bool:
    return _K.CHECKSUM.name not in values and not all(values.get(k.name) for k in _REQUIRED)


def _decode(data: bytes) -> str:
    # Java reads ISO-8859-1 and store() escapes non-ASCII; accept UTF-8 from other tools as hudi-rs does
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return data.decode("latin-1")
