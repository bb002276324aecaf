"""The Avro record schemas Hudi stores (commit `extraMetadata.schema`, create schema) as Arrow schemas.

Spark's Hudi writer records `<table>_record` in namespace `hoodie.<table>`, every field `["null", type]`
with default null, nested records and decimal `fixed` types named after their field (Spark's
`SchemaConverters`). `avro_to_arrow` reads any such schema, including create schemas with
`[type, "null"]` unions.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import pyarrow as pa

from hudi_ops.errors import InvalidTableError

AvroType = str | dict[str, Any] | list[Any]

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
    return pa.schema([struct.field(i) for i in range(struct.num_fields)])  # StructType.fields: pyarrow 18 on


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
