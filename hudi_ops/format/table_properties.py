"""`.hoodie/hoodie.properties`: Java `Properties` text, typed table settings and Hudi's update protocol.

Reads table versions 6, 8 and 9; builds and stores the exact key set Hudi 1.0.x writes for a new
version 8 table (hudi-v8.md §4). The file is rewritten only through Hudi's backup protocol, so Java
readers that find the main file missing fall back to `hoodie.properties.backup`.
"""

from __future__ import annotations

import json
import logging
import re
import zlib
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from types import MappingProxyType

from hudi_ops.config import ConfigKey, HoodieConfig, TableConfigKeys
from hudi_ops.errors import (
    ConfigError,
    FileAlreadyExistsError,
    InvalidTableError,
    StorageError,
    TableExistsError,
    TableNotFoundError,
)
from hudi_ops.storage import Storage

_log = logging.getLogger(__name__)

PROPERTIES_FILE = ".hoodie/hoodie.properties"
BACKUP_FILE = ".hoodie/hoodie.properties.backup"

SUPPORTED_VERSIONS = (6, 8, 9)
WRITE_VERSION = 8

EVENT_TIME_ORDERING = "EVENT_TIME_ORDERING"
COMMIT_TIME_ORDERING = "COMMIT_TIME_ORDERING"
CUSTOM = "CUSTOM"

DEFAULT_PAYLOAD = "org.apache.hudi.common.model.DefaultHoodieRecordPayload"
OVERWRITE_PAYLOAD = "org.apache.hudi.common.model.OverwriteWithLatestAvroPayload"

#: mode -> (hoodie.record.merge.strategy.id, hoodie.compaction.payload.class); Java writers reject other pairs
MERGE_TRIPLES: Mapping[str, tuple[str, str]] = MappingProxyType({
    EVENT_TIME_ORDERING: ("eeb8d96f-b1e4-49fd-bbf8-28ac514178e5", DEFAULT_PAYLOAD),
    COMMIT_TIME_ORDERING: ("ce9acb64-bde0-424c-9b91-f6ebba25356d", OVERWRITE_PAYLOAD),
})

KEYGEN_TYPES = ("SIMPLE", "COMPLEX", "NON_PARTITION", "TIMESTAMP", "CUSTOM")

# v6 tables name the key generator class; Java 1.0 maps it to a type the same way.
_KEYGEN_CLASS_TYPES = {
    "SimpleKeyGenerator": "SIMPLE",
    "SimpleAvroKeyGenerator": "SIMPLE_AVRO",
    "ComplexKeyGenerator": "COMPLEX",
    "ComplexAvroKeyGenerator": "COMPLEX_AVRO",
    "TimestampBasedKeyGenerator": "TIMESTAMP",
    "TimestampBasedAvroKeyGenerator": "TIMESTAMP_AVRO",
    "CustomKeyGenerator": "CUSTOM",
    "CustomAvroKeyGenerator": "CUSTOM_AVRO",
    "NonpartitionedKeyGenerator": "NON_PARTITION",
    "NonpartitionedAvroKeyGenerator": "NON_PARTITION_AVRO",
    "GlobalDeleteKeyGenerator": "GLOBAL_DELETE",
    "GlobalAvroDeleteKeyGenerator": "GLOBAL_DELETE_AVRO",
    "SqlKeyGenerator": "SPARK_SQL",
}

_K = TableConfigKeys
_ORDERING_FIELDS = "hoodie.table.ordering.fields"  # v9's name for the precombine field
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_FIELD_PATH = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$")

# -- Java Properties text ----------------------------------------------------------------------------

_WS = " \t\f"
_UNESCAPES = {"t": "\t", "n": "\n", "r": "\r", "f": "\f"}
_ESCAPES = {
    "\t": "\\t", "\n": "\\n", "\r": "\\r", "\f": "\\f", "=": "\\=", ":": "\\:", "#": "\\#", "!": "\\!",
}
_DAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")


def parse_properties(text: str) -> dict[str, str]:
    """Parse Java `Properties` text as `Properties.load` does; later duplicates win."""
    out: dict[str, str] = {}
    for line in _logical_lines(text):
        key, value = _split_key_value(line)
        out[key] = value
    return out


def format_properties(
    values: Mapping[str, str], *, header_time: datetime, comment: str | None = None
) -> str:
    """Java `Properties.store` output: `#<comment>`, `#<Date.toString()>`, then `key=value` in order.

    `comment` defaults to Hudi's `Properties saved on <ISO instant>`; both header lines are in UTC.
    """
    t = header_time.astimezone(UTC) if header_time.tzinfo else header_time.replace(tzinfo=UTC)
    lines = [f"#{comment if comment is not None else f'Properties saved on {java_instant(t)}'}",
             f"#{_java_date(t)}"]
    lines += [f"{_escape(k, is_key=True)}={_escape(v, is_key=False)}" for k, v in values.items()]
    return "\n".join(lines) + "\n"


def java_instant(t: datetime) -> str:
    """`Instant.toString()`: ISO-8601 in UTC with 0, 3 or 6 fraction digits."""
    t = t.astimezone(UTC)
    us = t.microsecond
    frac = "" if us == 0 else f".{us // 1000:03d}" if us % 1000 == 0 else f".{us:06d}"
    return f"{t:%Y-%m-%dT%H:%M:%S}{frac}Z"


def _java_date(t: datetime) -> str:
    # Date.toString() always uses English names, whatever the locale
    return f"{_DAYS[t.weekday()]} {_MONTHS[t.month - 1]} {t:%d %H:%M:%S} UTC {t.year}"


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


def _escape(s: str, *, is_key: bool) -> str:
    out: list[str] = []
    for i, c in enumerate(s):
        if c == "\\":
            out.append("\\\\")
        elif c == " ":
            out.append("\\ " if is_key or i == 0 else " ")
        elif c in _ESCAPES:
            out.append(_ESCAPES[c])
        elif " " < c < "\x7f":
            out.append(c)
        else:  # store() writes ISO-8859-1 and escapes everything outside printable ASCII
            units = c.encode("utf-16-be", "surrogatepass")
            out += [f"\\u{units[k]:02X}{units[k + 1]:02X}" for k in range(0, len(units), 2)]
    return "".join(out)


def checksum(database: str | None, table_name: str) -> int:
    """`HoodieTableConfig.generateChecksum`: CRC32 of UTF-8 `<database>.<table>`, database "" if absent."""
    return zlib.crc32(f"{database or ''}.{table_name}".encode())


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

    # -- reading and writing -----------------------------------------------------------------------

    @classmethod
    def load(cls, storage: Storage) -> TableProperties:
        """Read the table's properties; like Java, fall back to the backup when the main file is
        missing or invalid, e.g. fails its checksum (a writer is in the middle of updating it)."""
        first_error: InvalidTableError | None = None
        for rel in (PROPERTIES_FILE, BACKUP_FILE):
            try:
                data = storage.read_bytes(rel)
            except FileNotFoundError:
                continue
            try:
                props = cls(parse_properties(_decode(data)))
            except InvalidTableError as e:
                first_error = first_error or InvalidTableError(f"{storage.uri_of(rel)}: {e}")
                continue
            if props.table_version == 6 and _K.TIMELINE_LAYOUT_VERSION.name not in props.values:
                _log.warning("%s has no %s; assuming 1, as for every table version 6",
                             storage.uri_of(rel), _K.TIMELINE_LAYOUT_VERSION.name)
            return props
        if first_error is not None:
            raise first_error
        raise TableNotFoundError(storage.uri)

    @classmethod
    def for_new_table(
        cls,
        *,
        table_name: str,
        table_type: str,
        record_key_fields: str | Sequence[str],
        partition_fields: str | Sequence[str] = (),
        ordering_field: str | None = None,
        merge_mode: str | None = None,
        keygen_type: str | None = None,
        hive_style: bool = False,
        database: str = "default",
        create_schema: str | None = None,
    ) -> TableProperties:
        """The properties Hudi 1.0.x writes for a new version 8 table (hudi-v8.md §4.1).

        `merge_mode` defaults to EVENT_TIME_ORDERING with an ordering field, else COMMIT_TIME_ORDERING
        (Java's inference); `keygen_type` to NON_PARTITION, SIMPLE or COMPLEX from the field counts.
        Field lists may be given as sequences or comma-separated text.
        """
        _check_name("table name", table_name)
        _check_name("database", database)
        ttype = table_type.upper()
        if ttype not in _K.TYPE.choices:
            raise ConfigError(f"table type {table_type!r} is not valid; use COPY_ON_WRITE or MERGE_ON_READ")
        keys, parts = _field_list(record_key_fields), _field_list(partition_fields)
        if not keys:
            raise ConfigError("a table needs a record key field; pass e.g. record_key_fields=['id']")
        for f in (*keys, *parts, *([ordering_field] if ordering_field is not None else [])):
            _check_field(f)
        mode = (merge_mode or (EVENT_TIME_ORDERING if ordering_field else COMMIT_TIME_ORDERING)).upper()
        if mode not in MERGE_TRIPLES:
            raise ConfigError(f"merge mode {merge_mode!r} is not valid; use {' or '.join(MERGE_TRIPLES)}")
        if mode == EVENT_TIME_ORDERING and not ordering_field:
            raise ConfigError("EVENT_TIME_ORDERING needs an ordering field: pass ordering_field=<column>, "
                              "or use merge_mode=COMMIT_TIME_ORDERING (the latest write wins)")
        keygen = (keygen_type or infer_keygen_type(keys, parts)).upper()
        if keygen not in KEYGEN_TYPES:
            raise ConfigError(
                f"key generator type {keygen_type!r} is not valid; use one of {', '.join(KEYGEN_TYPES)}"
            )
        if create_schema is not None:
            try:
                json.loads(create_schema)
            except ValueError as e:
                raise ConfigError(f"create_schema is not JSON ({e}); pass the Avro schema's JSON") from None
        strategy_id, payload = MERGE_TRIPLES[mode]
        v: dict[str, str] = {
            _K.NAME.name: table_name,
            _K.TYPE.name: ttype,
            _K.VERSION.name: str(WRITE_VERSION),
            _K.INITIAL_VERSION.name: str(WRITE_VERSION),
            _K.TIMELINE_LAYOUT_VERSION.name: "2",
            _K.TIMELINE_PATH.name: "timeline",
            _K.TIMELINE_HISTORY_PATH.name: "history",
            _K.ARCHIVELOG_FOLDER.name: "archived",
            _K.RECORD_KEY_FIELDS.name: ",".join(keys),
        }
        if parts:  # hudi-rs returns no rows from a partitioned table that lacks this key
            v[_K.PARTITION_FIELDS.name] = ",".join(parts)
        v[_K.KEYGEN_TYPE.name] = keygen
        v[_K.HIVE_STYLE_PARTITIONING.name] = _bool(hive_style)
        v[_K.URL_ENCODE_PARTITIONING.name] = "false"
        v[_K.DROP_PARTITION_COLUMNS.name] = "false"  # hudi-rs refuses tables that drop them
        if ordering_field:
            v[_K.PRECOMBINE_FIELD.name] = ordering_field
        v[_K.RECORD_MERGE_MODE.name] = mode
        v[_K.RECORD_MERGE_STRATEGY_ID.name] = strategy_id
        v[_K.PAYLOAD_CLASS.name] = payload
        v[_K.TIMELINE_TIMEZONE.name] = "UTC"
        v[_K.DATABASE_NAME.name] = database
        if create_schema is not None:
            v[_K.CREATE_SCHEMA.name] = create_schema
        v[_K.CHECKSUM.name] = str(checksum(database, table_name))
        return cls(v)

    def updated(self, **changes: str | None) -> TableProperties:
        """A copy with `changes` applied (None removes a key); keys are full property names, so pass
        them as `**{"hoodie.table.metadata.partitions": None}`. The checksum follows name and database."""
        v = dict(self.values)
        for key, value in changes.items():
            if value is None:
                v.pop(key, None)
            else:
                v[key] = value
        if _K.CHECKSUM.name in v and _K.CHECKSUM.name not in changes and _K.NAME.name in v:
            v[_K.CHECKSUM.name] = str(checksum(v.get(_K.DATABASE_NAME.name), v[_K.NAME.name]))
        return TableProperties(v)

    def store(self, storage: Storage, *, create: bool) -> None:
        """Write these properties. `create` makes the file (TableExistsError if there is one);
        otherwise Hudi's update protocol replaces it: backup, delete, write, verify, drop backup."""
        now = datetime.now(UTC)
        if create:
            text = format_properties(self._with_checksum(), header_time=now)
            try:
                storage.create_new(PROPERTIES_FILE, text.encode("ascii"))
            except FileAlreadyExistsError:
                raise TableExistsError(storage.uri) from None
            return
        comment = f"Updated at {java_instant(now)}"
        text = format_properties(self._with_checksum(), header_time=now, comment=comment)
        current = _recover(storage)
        try:
            storage.create_new(BACKUP_FILE, current)
        except FileAlreadyExistsError:
            raise StorageError(
                f"{storage.uri_of(BACKUP_FILE)} appeared while updating hoodie.properties: another "
                "process is updating it; retry once it has finished"
            ) from None
        storage.delete_file(PROPERTIES_FILE)  # readers use the backup until the new file is in place
        storage.write_bytes(PROPERTIES_FILE, text.encode("ascii"))
        written = parse_properties(_decode(storage.read_bytes(PROPERTIES_FILE)))
        if written.get(_K.CHECKSUM.name) != self._with_checksum()[_K.CHECKSUM.name]:
            storage.delete_file(PROPERTIES_FILE)  # the next update recovers from the backup
            raise StorageError(
                f"{storage.uri_of(PROPERTIES_FILE)} did not read back with its checksum; readers use "
                "hoodie.properties.backup meanwhile; retry the update"
            )
        storage.delete_file(BACKUP_FILE)

    def _with_checksum(self) -> dict[str, str]:
        """The values with a correct checksum written last, as Java stores them."""
        v = {k: x for k, x in self.values.items() if k != _K.CHECKSUM.name}
        v[_K.CHECKSUM.name] = str(checksum(self.database, self.table_name))
        return v

    def as_config(self) -> HoodieConfig:
        return HoodieConfig(dict(self.values))

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
    def record_key_fields(self) -> tuple[str, ...]:
        return self._get(_K.RECORD_KEY_FIELDS)  # type: ignore[return-value]

    @property
    def partition_fields(self) -> tuple[str, ...]:
        # CustomKeyGenerator stores `field:SIMPLE` / `field:TIMESTAMP`; the column is before the colon
        raw: tuple[str, ...] = self._get(_K.PARTITION_FIELDS)  # type: ignore[assignment]
        return tuple(f for f in (p.split(":", 1)[0].strip() for p in raw) if f)

    @property
    def ordering_field(self) -> str | None:
        """The precombine field (v9: `hoodie.table.ordering.fields`); one at most, as hudi-rs requires."""
        raw = self.values.get(_ORDERING_FIELDS) or self.values.get(_K.PRECOMBINE_FIELD.name) or ""
        fields = [f.strip() for f in raw.split(",") if f.strip()]
        if len(fields) > 1:
            raise InvalidTableError(
                f"the table orders records by several fields ({raw}); hudi-ops and hudi-rs support one only"
            )
        return fields[0] if fields else None

    @property
    def keygen_type(self) -> str | None:
        """`hoodie.table.keygenerator.type`, else derived from the v6 key generator class."""
        explicit = self.values.get(_K.KEYGEN_TYPE.name)
        if explicit:
            return explicit.upper()
        cls_name = self.values.get(_K.KEYGEN_CLASS.name)
        if not cls_name:
            return None
        return _KEYGEN_CLASS_TYPES.get(cls_name.rsplit(".", 1)[-1], "USER_PROVIDED")

    @property
    def hive_style_partitioning(self) -> bool:
        return self._get(_K.HIVE_STYLE_PARTITIONING)  # type: ignore[return-value]

    @property
    def url_encode_partitioning(self) -> bool:
        return self._get(_K.URL_ENCODE_PARTITIONING)  # type: ignore[return-value]

    @property
    def populate_meta_fields(self) -> bool:
        return self._get(_K.POPULATE_META_FIELDS)  # type: ignore[return-value]

    @property
    def merge_mode(self) -> str:
        """EVENT_TIME_ORDERING, COMMIT_TIME_ORDERING or CUSTOM; inferred for tables (v6) that lack it,
        the way Hudi 1.x upgrades them: from the payload class, COMMIT_TIME without an ordering field."""
        explicit = self.values.get(_K.RECORD_MERGE_MODE.name)
        if explicit:
            return explicit.upper()
        payload = self.values.get(_K.PAYLOAD_CLASS.name) or DEFAULT_PAYLOAD  # Java's default for v6
        if payload not in (DEFAULT_PAYLOAD, OVERWRITE_PAYLOAD):
            return CUSTOM
        if self.ordering_field is None or payload == OVERWRITE_PAYLOAD:
            return COMMIT_TIME_ORDERING
        return EVENT_TIME_ORDERING

    @property
    def timezone(self) -> str:
        """Timezone of instant times: UTC or LOCAL (Java's default when absent)."""
        tz = (self.values.get(_K.TIMELINE_TIMEZONE.name) or "LOCAL").upper()
        if tz not in ("UTC", "LOCAL"):
            raise InvalidTableError(f"{_K.TIMELINE_TIMEZONE.name}={tz!r} is not valid; use UTC or LOCAL")
        return tz

    @property
    def metadata_partitions(self) -> tuple[str, ...]:
        """Completed metadata-table partitions that readers trust for file listing."""
        return self._get(_K.METADATA_PARTITIONS)  # type: ignore[return-value]

    @property
    def create_schema(self) -> str | None:
        """The Avro schema JSON of the table at creation, without meta fields (optional)."""
        return self.values.get(_K.CREATE_SCHEMA.name) or None

    # -- helpers -----------------------------------------------------------------------------------

    def _get(self, key: ConfigKey[object]) -> object:
        try:
            return HoodieConfig(self.values).get(key)
        except ConfigError as e:
            raise InvalidTableError(f"hoodie.properties: {e}") from None

    def _validate(self) -> None:
        for key, fix in (
            (_K.NAME, "hoodie.table.name=<the table's name>"),
            (_K.TYPE, "hoodie.table.type=COPY_ON_WRITE or MERGE_ON_READ"),
            (_K.VERSION, "hoodie.table.version=<6, 8 or 9, as written by the Hudi release that made it>"),
        ):
            if not self.values.get(key.name):
                raise InvalidTableError(f"hoodie.properties lacks the required key {key.name}; add {fix}")
        self._get(_K.TYPE)  # parse now, so a bad value fails on load and not in a later read
        version = self.table_version
        if version not in SUPPORTED_VERSIONS:
            raise InvalidTableError(
                f"hoodie.table.version={version} is not supported: hudi-ops reads table versions 6, 8 and 9 "
                "and writes 8; upgrade or downgrade the table with Hudi's CLI"
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
                    f"hoodie.table.checksum={stored} does not match the CRC32 of "
                    f"'{self.database or ''}.{self.table_name}' ({expected_sum}): the file is damaged or was "
                    "edited by hand, and Java rejects it; fix hoodie.table.name / hoodie.database.name, "
                    f"or set hoodie.table.checksum={expected_sum}"
                )


def check_writable_v8(props: TableProperties) -> None:
    """Refuse to write unless the table is still what hudi-ops writes: version 8 (hence timeline
    layout 2, which TableProperties enforces) and no metadata-table partitions, completed or inflight."""
    if props.table_version != WRITE_VERSION:
        raise InvalidTableError(
            f"table {props.table_name!r} is at version {props.table_version}; hudi-ops writes only table "
            "version 8. Version 9 comes from a Hudi 1.1 writer's auto-upgrade (pin Java writers with "
            "hoodie.write.table.version=8 and hoodie.write.auto.upgrade=false); upgrade version 6 with "
            "Hudi 1.0.x"
        )
    inflight = props.as_config().get(_K.METADATA_PARTITIONS_INFLIGHT) or ()
    in_use = (*props.metadata_partitions, *inflight)
    if in_use:
        raise InvalidTableError(
            f"table {props.table_name!r} has a metadata table (partitions {', '.join(in_use)}): readers list "
            "files through it, so commits from hudi-ops, which does not maintain it, would be invisible. "
            "Remove it by running a Java writer once with hoodie.metadata.enable=false, and run every Java "
            "writer so"
        )
    if props.timezone != "UTC":
        raise InvalidTableError(
            f"table {props.table_name!r} has hoodie.table.timeline.timezone={props.timezone}: its instant times "
            "follow the writer's local clock zone, while hudi-ops generates UTC times, and mixing the two breaks "
            "the timeline's order. If its instants are in UTC (Java writers running with TZ=UTC), set "
            "hoodie.table.timeline.timezone=UTC in hoodie.properties"
        )


def _recover(storage: Storage) -> bytes:
    """Hudi's `recoverIfNeeded`: restore a main file lost mid-update from the backup; return its bytes."""
    try:
        current = storage.read_bytes(PROPERTIES_FILE)
    except FileNotFoundError:
        try:
            current = storage.read_bytes(BACKUP_FILE)
        except FileNotFoundError:
            raise TableNotFoundError(storage.uri) from None
        storage.write_bytes(PROPERTIES_FILE, current)
    storage.delete_file(BACKUP_FILE)
    return current


def _decode(data: bytes) -> str:
    # Java reads ISO-8859-1 and store() escapes non-ASCII; accept UTF-8 from other tools as hudi-rs does
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return data.decode("latin-1")


def infer_keygen_type(keys: tuple[str, ...], parts: tuple[str, ...]) -> str:
    """The generator Hudi picks from the field counts when a table names none."""
    if not parts:
        return "NON_PARTITION"
    return "SIMPLE" if len(keys) == 1 and len(parts) == 1 else "COMPLEX"


def _field_list(fields: str | Sequence[str]) -> tuple[str, ...]:
    items = fields.split(",") if isinstance(fields, str) else fields
    return tuple(f.strip() for f in items if f.strip())


def _check_name(what: str, name: str) -> None:
    if not _NAME.match(name):
        raise ConfigError(f"{what} {name!r} is not valid: use letters, digits and underscores, not starting "
                          "with a digit (Hive and Avro names)")


def _check_field(field: str) -> None:
    if not _FIELD_PATH.match(field):
        raise ConfigError(f"field {field!r} is not a valid column name: use letters, digits and underscores "
                          "(dots for nested fields), one field per list entry")


def _bool(b: bool) -> str:
    return "true" if b else "false"
