"""Partition paths: one folder segment per partition field, `field=value` when hive-style.

With `hoodie.datasource.write.partitionpath.urlencode=true`, values are escaped as Hive's
`FileUtils.escapePathName` does (Hudi's PartitionPathEncodeUtils), so Java writers and hudi-ops
name the same partition the same way.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

DEFAULT_PARTITION = "__HIVE_DEFAULT_PARTITION__"

_ESCAPED = frozenset([chr(c) for c in range(1, 0x20)] + list("\"#%'*/:=?\\\x7f{[]^"))
_HEX = re.compile(r"%([0-9A-Fa-f]{2})")


def escape_path_name(value: str) -> str:
    return "".join(f"%{ord(ch):02X}" if ch in _ESCAPED else ch for ch in value)


def unescape_path_name(value: str) -> str:
    return _HEX.sub(lambda m: chr(int(m.group(1), 16)), value)


def partition_values(
    partition_path: str, fields: Sequence[str], *, hive_style: bool, url_encoded: bool
) -> dict[str, str | None] | None:
    """Each partition field's value as written in the path (None for the default partition), or None
    when the path does not have one segment per field (e.g. a timestamp key generator's format)."""
    segments = partition_path.split("/") if partition_path else []
    if len(segments) != len(fields):
        return None
    out: dict[str, str | None] = {}
    for name, seg in zip(fields, segments, strict=True):
        if hive_style:
            prefix = f"{name}="
            if not seg.startswith(prefix):
                return None
            seg = seg[len(prefix):]
        value = unescape_path_name(seg) if url_encoded else seg
        out[name] = None if value == DEFAULT_PARTITION else value
    return out
