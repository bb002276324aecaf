"""`.hoodie/hoodie.properties`: Java `Properties` text and the typed table settings of versions 6, 8, 9.

Only Hudi writes the file, through its backup protocol: a reader that finds the main file missing or
damaged (a writer is updating it) falls back to `hoodie.properties.backup`, as Java's does.
"""

from __future__ import annotations

import logging
import re
import zlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from types import MappingProxyType

from hudi_ops.config import ConfigKey, HoodieConfig, TableConfigKeys
from hudi_ops.errors import ConfigError, InvalidTableError, TableNotFoundError
from hudi_ops.storage import Storage

_log = logging.getLogger(__name__)

PROPERTIES_FILE = ".hoodie/hoodie.properties"
BACKUP_FILE = ".hoodie/hoodie.properties.backup"

SUPPORTED_VERSIONS = (6, 8, 9)

EVENT_TIME_ORDERING = "EVENT_TIME_ORDERING"
COMMIT_TIME_ORDERING = "COMMIT_TIME_ORDERING"
CUSTOM = "CUSTOM"

DEFAULT_PAYLOAD = "org.apache.hudi.common.model.DefaultHoodieRecordPayload"
OVERWRITE_PAYLOAD = "org.apache.hudi.common.model.OverwriteWithLatestAvroPayload"

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
    def history_path(self) -> str | None:
        """Table-relative folder of the LSM archived timeline (layout 2); None for layout 1's archive."""
        if self.timeline_layout_version == 1:
            return None
        return f"{self.timeline_path}/{self._get(_K.TIMELINE_HISTORY_PATH)}"

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
                f"hoodie.table.version={version} is not supported: hudi-ops reads table versions 6, 8 and 9; "
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
                    f"hoodie.table.checksum={stored} does not match the CRC32 of "
                    f"'{self.database or ''}.{self.table_name}' ({expected_sum}): the file is damaged or was "
                    "edited by hand, and Java rejects it; fix hoodie.table.name / hoodie.database.name, "
                    f"or set hoodie.table.checksum={expected_sum}"
                )


def _decode(data: bytes) -> str:
    # Java reads ISO-8859-1 and store() escapes non-ASCII; accept UTF-8 from other tools as hudi-rs does
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return data.decode("latin-1")
