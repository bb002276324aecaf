"""Write operations, by Hudi's WriteOperationType names as recorded in commit metadata."""

from __future__ import annotations

from enum import Enum

from hudi_ops.errors import InvalidInputError


class WriteOperation(Enum):
    INSERT = "INSERT"
    UPSERT = "UPSERT"
    BULK_INSERT = "BULK_INSERT"
    DELETE = "DELETE"

    @classmethod
    def parse(cls, text: str) -> WriteOperation:
        try:
            return cls(text.strip().upper())
        except ValueError:
            raise InvalidInputError(
                f"operation {text!r} is not supported; use one of upsert, insert, bulk_insert, delete"
            ) from None
