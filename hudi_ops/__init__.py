"""hudi-ops: run many independent pipelines against one Apache Hudi table."""

from hudi_ops.client.write_client import CommitResult, WriteClient, WriteOperation
from hudi_ops.errors import (
    HudiOpsError,
    InvalidInputError,
    InvalidTableError,
    TableNotFoundError,
    WriteConflictError,
)
from hudi_ops.table import HudiTable

__all__ = [
    "CommitResult",
    "HudiOpsError",
    "HudiTable",
    "InvalidInputError",
    "InvalidTableError",
    "TableNotFoundError",
    "WriteClient",
    "WriteConflictError",
    "WriteOperation",
]
