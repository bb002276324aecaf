"""Reading Avro timeline files: one-record object containers, and their records as dataclasses.

Hudi 1.x writes every Avro timeline file with Java's `DataFileWriter` and the null codec: magic,
a header map holding only `avro.schema`, a 16-byte sync marker, then one block with one record.
hudi-ops only reads them, resolving each record with the writer schema the file embeds.
"""

from __future__ import annotations

import dataclasses
import functools
import io
import types
import typing
from collections.abc import Mapping
from typing import Any, TypeVar

import fastavro

from hudi_ops.errors import InvalidTableError

MAGIC = b"Obj\x01"
T = TypeVar("T")


def read_single_record(data: bytes, *, expect: str | None = None) -> dict[str, Any] | None:
    """The one record of a timeline container file, or None for an empty file.

    Hudi leaves many requested/inflight files empty, so empty means "no content", not an error.
    `expect` is a record name (e.g. `HoodieCleanerPlan`); a file holding another record type, or
    anything that is not a one-record container, raises InvalidTableError.
    """
    if not data:
        return None
    if not data.startswith(MAGIC):
        raise InvalidTableError(f"not an Avro container file (starts with {bytes(data[:8])!r})")
    try:
        reader = fastavro.reader(io.BytesIO(data))
        records = list(reader)
    except Exception as e:  # fastavro raises assorted errors on truncated or corrupt input
        raise InvalidTableError(f"corrupt Avro container file: {e}") from e
    name = str(reader.writer_schema.get("name", "")).rpartition(".")[2]
    if expect is not None and name != expect:
        raise InvalidTableError(f"expected an Avro {expect} record, the file holds {name or 'none'}")
    if len(records) != 1:
        raise InvalidTableError(f"expected one record in the Avro {name} file, found {len(records)}")
    return records[0]


# --- Avro record -> dataclass --------------------------------------------------------------------
# A frozen dataclass maps field by field to a record; its type hints say how to rebuild nested values:
# `X | None`, `tuple[X, ...]` (Avro array), `dict[str, X]` (Avro map), nested dataclasses (records).


def avro_name(f: dataclasses.Field[Any]) -> str:
    """The Hudi field name: `metadata={"avro": ...}` if given, else the camelCase of the Python name."""
    if "avro" in f.metadata:
        return f.metadata["avro"]
    head, *rest = f.name.split("_")
    return head + "".join(p.capitalize() for p in rest)


def from_avro_record(cls: type[T], record: Mapping[str, Any]) -> T:
    """Rebuild `cls` from a record (or a JSON object using the same names).

    A missing field, or a null where the dataclass does not allow None, takes the field's default:
    that is how older or smaller writer schemas, and Hudi's v6 JSON, come out.
    """
    hints = _hints(cls)
    kwargs = {}
    for f in dataclasses.fields(cls):  # type: ignore[arg-type]
        name, tp = avro_name(f), hints[f.name]
        if name not in record or (record[name] is None and not _nullable(tp)):
            continue
        kwargs[f.name] = _decode(tp, record[name])
    try:
        return cls(**kwargs)
    except TypeError as e:  # a required field is missing or null
        raise InvalidTableError(f"bad {cls.__name__} record: {e}") from e


@functools.cache
def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def _nullable(tp: Any) -> bool:
    return isinstance(tp, types.UnionType) and type(None) in typing.get_args(tp)


def _decode(tp: Any, value: Any) -> Any:
    if value is None:
        return None
    if isinstance(tp, types.UnionType):
        (tp,) = [a for a in typing.get_args(tp) if a is not type(None)]
    origin = typing.get_origin(tp)
    if origin is tuple:
        item = typing.get_args(tp)[0]
        return tuple(_decode(item, v) for v in value)
    if origin is dict:
        item = typing.get_args(tp)[1]
        return {k: _decode(item, v) for k, v in value.items()}
    if dataclasses.is_dataclass(tp):
        return from_avro_record(tp, value)
    return value
