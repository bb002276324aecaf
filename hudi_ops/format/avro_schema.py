"""Arrow schemas <-> the Avro record schemas Hudi stores (commit `extraMetadata.schema`, create schema).

`arrow_to_avro` produces the shape Spark's Hudi 1.0 writer puts in commit metadata: record
`<table>_record` in namespace `hoodie.<table>`, every field `["null", type]` with default null, nested
records and decimal `fixed` types named after their field in a namespace nested per record level
(Spark's `SchemaConverters`), so readers see the same schema whichever engine wrote the commit.
`avro_to_arrow` reads any such schema back, including create schemas with `[type, "null"]` unions.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

import pyarrow as pa

from hudi_ops.errors import InvalidInputError, InvalidTableError

AvroType = str | dict[str, Any] | list[Any]

_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_INVALID_CHARS = re.compile(r"[^A-Za-z0-9_]")

_PRIMITIVES: Mapping[str, pa.DataType] = {
    "null": pa.null(),
    "boolean": pa.bool_(),
    "int": pa.int32(),
    "long": pa.int64(),
    "float": pa.float32(),
    "double": pa.float64(),
    "bytes": pa.binary(),
    "string": pa.string(),
}

_TIMESTAMPS = {  # logical type -> (unit, tz); hudi-rs reads timestamp-* as UTC instants
    "timestamp-millis": ("ms", "UTC"),
    "timestamp-micros": ("us", "UTC"),
    "timestamp-nanos": ("ns", "UTC"),
    "local-timestamp-millis": ("ms", None),
    "local-timestamp-micros": ("us", None),
    "local-timestamp-nanos": ("ns", None),
}


def record_name_and_namespace(table_name: str) -> tuple[str, str]:
    """`AvroConversionUtils.getAvroRecordNameAndNamespace`: (`<name>_record`, `hoodie.<name>`)."""
    name = _sanitize(table_name)
    return f"{name}_record", f"hoodie.{name}"


def schema_to_json(schema: Mapping[str, Any]) -> str:
    """Compact JSON, as Java's `Schema.toString()` prints it."""
    return json.dumps(schema, separators=(",", ":"), ensure_ascii=False)


# -- Arrow -> Avro -----------------------------------------------------------------------------------


def arrow_to_avro(schema: pa.Schema, *, table_name: str) -> dict[str, Any]:
    """The Avro record schema Spark's Hudi writer records for data of this Arrow schema.

    Raises InvalidInputError naming the column for types and names Avro cannot hold.
    """
    name, namespace = record_name_and_namespace(table_name)
    return _record(list(schema), name, namespace, path="")


def _record(fields: list[pa.Field], name: str, namespace: str, path: str) -> dict[str, Any]:
    child_namespace = f"{namespace}.{name}"
    seen: set[str] = set()
    out = []
    for f in fields:
        column = f"{path}.{f.name}" if path else f.name
        if not _NAME.match(f.name):
            raise InvalidInputError(
                f"column {column!r}: Avro, and so Hudi, allows names of letters, digits and underscores "
                "not starting with a digit; rename the column"
            )
        if f.name in seen:
            raise InvalidInputError(f"column {column!r} appears twice; rename one of them")
        seen.add(f.name)
        avro = _avro_type(f.type, f.name, child_namespace, column)
        out.append({"name": f.name, "type": ["null", avro], "default": None})
    return {"type": "record", "name": name, "namespace": namespace, "fields": out}


def _avro_type(t: pa.DataType, name: str, namespace: str, column: str) -> AvroType:
    """`name` / `namespace` name nested records and fixed types the way Spark does."""
    if pa.types.is_boolean(t):
        return "boolean"
    if pa.types.is_int8(t) or pa.types.is_int16(t) or pa.types.is_int32(t):
        return "int"
    if pa.types.is_int64(t):
        return "long"
    if pa.types.is_float32(t):
        return "float"
    if pa.types.is_float64(t):
        return "double"
    if pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_string_view(t):
        return "string"
    if pa.types.is_binary(t) or pa.types.is_large_binary(t) or pa.types.is_binary_view(t):
        return "bytes"
    if pa.types.is_decimal(t) and t.precision <= 38:
        return {"type": "fixed", "name": "fixed", "namespace": f"{namespace}.{name}",
                "size": _decimal_size(t.precision), "logicalType": "decimal",
                "precision": t.precision, "scale": t.scale}
    if pa.types.is_date32(t):
        return {"type": "int", "logicalType": "date"}
    if pa.types.is_timestamp(t):
        # Every unit and zone becomes Spark's TimestampType (UTC micros): hudi-rs 0.5.0 panics on
        # local-timestamp-*, so naive timestamps are stored as UTC and writers cast values to micros.
        return {"type": "long", "logicalType": "timestamp-micros"}
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return {"type": "array", "items": ["null", _avro_type(t.value_type, name, namespace, column)]}
    if pa.types.is_struct(t):
        return _record(list(t.fields), name, namespace, column)
    if pa.types.is_map(t):
        if not (pa.types.is_string(t.key_type) or pa.types.is_large_string(t.key_type)):
            raise InvalidInputError(
                f"column {column!r} is a map with {t.key_type} keys; Avro maps need string keys: cast the "
                "keys to string or store a list of key/value structs"
            )
        return {"type": "map", "values": ["null", _avro_type(t.item_type, name, namespace, column)]}
    raise InvalidInputError(f"column {column!r} has type {t}, which Hudi tables cannot store; {_fix_for(t)}")


def _fix_for(t: pa.DataType) -> str:
    if pa.types.is_unsigned_integer(t):
        return "cast it to a signed integer type wide enough for its values (int64 for uint32/uint64)"
    if pa.types.is_dictionary(t):
        return f"cast it to its value type ({t.value_type})"
    if pa.types.is_null(t):
        return "it holds only nulls; cast it to the type it is meant to have"
    return ("cast it to one of: bool, int8-64, float32/64, string, binary, decimal128 (precision <= 38), "
            "date32, timestamp, list, struct, map with string keys")


def _decimal_size(precision: int) -> int:
    """Spark's `minBytesForPrecision`: the fewest bytes whose signed range holds 10^precision."""
    size = 1
    while 2 ** (8 * size - 1) < 10**precision:
        size += 1
    return size


def _sanitize(name: str) -> str:
    """`HoodieAvroUtils.sanitizeName`: invalid characters (and a leading digit) become `__`."""
    if name and not re.match(r"[A-Za-z_]", name[0]):
        name = "__" + name[1:]
    return _INVALID_CHARS.sub("__", name)


# -- Avro -> Arrow -----------------------------------------------------------------------------------


def avro_to_arrow(avro: Mapping[str, Any] | str) -> pa.Schema:
    """The Arrow schema of a table's Avro record schema (dict or JSON text).

    Union fields with null become nullable fields; list items are named `element` and map values
    `value`, as hudi-rs names them. Raises InvalidTableError for schemas Arrow cannot express.
    """
    schema = json.loads(avro) if isinstance(avro, str) else avro
    if not isinstance(schema, Mapping) or schema.get("type") != "record":
        raise InvalidTableError(f"a table schema must be an Avro record, got {str(schema)[:100]!r}")
    struct = _ArrowBuilder().arrow_type(schema, None, "")
    return pa.schema(list(struct.fields))


class _ArrowBuilder:
    """Converts one schema, remembering named types so later references by name resolve."""

    def __init__(self) -> None:
        self.named: dict[str, pa.DataType] = {}

    def field(self, name: str, avro: AvroType, namespace: str | None, path: str) -> pa.Field:
        avro, nullable = self._strip_null(avro, path)
        return pa.field(name, self.arrow_type(avro, namespace, path), nullable=nullable)

    def arrow_type(self, avro: AvroType, namespace: str | None, path: str) -> pa.DataType:
        if isinstance(avro, str):
            return self._by_name(avro, namespace, path)
        if isinstance(avro, list):
            avro, _ = self._strip_null(avro, path)
            return self.arrow_type(avro, namespace, path)
        kind = avro.get("type")
        if isinstance(kind, (dict, list)):  # {"type": {...}} wraps a full type
            return self.arrow_type(kind, namespace, path)
        logical = self._logical(avro)
        if logical is not None:
            return logical
        if kind in ("record", "enum", "fixed"):
            full_name, inner_ns = _full_name(avro, namespace)
            if kind == "record":
                result: pa.DataType = pa.struct([
                    self.field(f["name"], f["type"], inner_ns, f"{path}.{f['name']}" if path else f["name"])
                    for f in avro.get("fields", [])
                ])
            else:
                result = pa.string() if kind == "enum" else pa.binary(int(avro["size"]))
            self.named[full_name] = result
            return result
        if kind == "array":
            item, nullable = self._strip_null(avro["items"], path)
            return pa.list_(pa.field("element", self.arrow_type(item, namespace, path), nullable=nullable))
        if kind == "map":
            value, nullable = self._strip_null(avro["values"], path)
            value_field = pa.field("value", self.arrow_type(value, namespace, path), nullable=nullable)
            return pa.map_(pa.string(), value_field)
        if isinstance(kind, str):
            return self._by_name(kind, namespace, path)
        raise InvalidTableError(f"schema field {path!r} has an unreadable Avro type {avro!r}")

    def _logical(self, avro: Mapping[str, Any]) -> pa.DataType | None:
        logical, kind = avro.get("logicalType"), avro.get("type")
        if logical == "decimal" and kind in ("bytes", "fixed"):
            precision, scale = int(avro["precision"]), int(avro.get("scale", 0))
            return pa.decimal128(precision, scale) if precision <= 38 else pa.decimal256(precision, scale)
        if logical == "date" and kind == "int":
            return pa.date32()
        if logical == "time-millis" and kind == "int":
            return pa.time32("ms")
        if logical == "time-micros" and kind == "long":
            return pa.time64("us")
        if logical in _TIMESTAMPS and kind == "long":
            unit, tz = _TIMESTAMPS[logical]
            return pa.timestamp(unit, tz=tz)
        if logical == "uuid" and kind == "string":
            return pa.string()
        return None  # Avro readers ignore logical types they do not know

    def _by_name(self, name: str, namespace: str | None, path: str) -> pa.DataType:
        if name in _PRIMITIVES:
            return _PRIMITIVES[name]
        for candidate in (name, f"{namespace}.{name}" if namespace else name):
            if candidate in self.named:
                return self.named[candidate]
        raise InvalidTableError(f"schema field {path!r} refers to unknown (or recursive) Avro type {name!r}")

    @staticmethod
    def _strip_null(avro: AvroType, path: str) -> tuple[AvroType, bool]:
        """(the non-null branch, whether null is allowed) of a type that may be a union with null."""
        if not isinstance(avro, list):
            return avro, False
        rest = [t for t in avro if t != "null"]
        if len(rest) > 1:
            raise InvalidTableError(
                f"schema field {path!r} is a union of several types {avro!r}; only unions with null "
                "are supported"
            )
        return (rest[0] if rest else "null"), len(rest) < len(avro)


def _full_name(avro: Mapping[str, Any], namespace: str | None) -> tuple[str, str | None]:
    """(full name, namespace for the types it contains) of a named Avro type."""
    name = avro["name"]
    if "." in name:
        return name, name.rsplit(".", 1)[0]
    ns = avro.get("namespace", namespace) or None
    return (f"{ns}.{name}" if ns else name), ns
