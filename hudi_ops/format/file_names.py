"""Base and log file names as frozen value objects that print back exactly.

Base file: `<fileId>_<writeToken>_<instant>.<ext>`; log file:
`.<fileId>_<instant>.log.<version>_<writeToken>[.cdc]`. In table version 8 the log's instant is
the requested time of the deltacommit that wrote it; in version 6 it is the slice's base instant.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from hudi_ops.errors import InvalidTableError

_BASE = re.compile(r"^(?P<fid>[a-zA-Z0-9-]+)_(?P<tok>[a-zA-Z0-9-]+)_(?P<ts>[0-9]+)\.(?P<ext>[a-zA-Z0-9]+)$")
_LOG = re.compile(
    r"^\.(?P<fid>.+)_(?P<ts>[^_]*)\.(?P<kind>log|archive)\.(?P<ver>\d+)"
    r"(?:_(?P<tok>\d+-\d+-\d+))?(?P<cdc>\.cdc)?$"
)


@dataclass(frozen=True, slots=True)
class BaseFileName:
    file_id: str
    write_token: str
    instant_time: str
    extension: str = "parquet"

    @classmethod
    def parse(cls, name: str) -> BaseFileName:
        m = _BASE.match(name)
        if not m:
            raise InvalidTableError(f"{name!r} is not a Hudi base file name (<fileId>_<token>_<instant>.<ext>)")
        return cls(m["fid"], m["tok"], m["ts"], m["ext"])

    @classmethod
    def try_parse(cls, name: str) -> BaseFileName | None:
        m = _BASE.match(name)
        return cls(m["fid"], m["tok"], m["ts"], m["ext"]) if m else None

    @property
    def file_name(self) -> str:
        return f"{self.file_id}_{self.write_token}_{self.instant_time}.{self.extension}"

    def __str__(self) -> str:
        return self.file_name


@dataclass(frozen=True, slots=True)
class LogFileName:
    file_id: str
    instant_time: str
    version: int
    write_token: str | None = None
    kind: str = "log"
    cdc: bool = False

    @classmethod
    def parse(cls, name: str) -> LogFileName:
        parsed = cls.try_parse(name)
        if parsed is None:
            raise InvalidTableError(f"{name!r} is not a Hudi log file name (.<fileId>_<instant>.log.<n>_<token>)")
        return parsed

    @classmethod
    def try_parse(cls, name: str) -> LogFileName | None:
        m = _LOG.match(name)
        if not m:
            return None
        return cls(m["fid"], m["ts"], int(m["ver"]), m["tok"], m["kind"], m["cdc"] is not None)

    @property
    def file_name(self) -> str:
        tok = f"_{self.write_token}" if self.write_token is not None else ""
        return f".{self.file_id}_{self.instant_time}.{self.kind}.{self.version}{tok}{'.cdc' if self.cdc else ''}"

    @property
    def sort_key(self) -> tuple[str, int, str]:
        """Hudi's LogFileComparator order: instant, version, write token."""
        return (self.instant_time, self.version, self.write_token or "")

    def __str__(self) -> str:
        return self.file_name
