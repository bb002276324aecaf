"""hudi-ops: run many independent pipelines against one Apache Hudi table.

Apache Hudi's Spark writer and table services do all writing (`hudi_ops.spark`, run by spark-submit);
hudi-ops' Python reads tables without a JVM (`hudi_ops.format`, `hudi_ops.read`), sees and holds the
ZooKeeper lock (`hudi_ops.locks`) and runs it all from Airflow (`hudi_ops.airflow`).
"""

from hudi_ops.errors import (
    HudiOpsError,
    InvalidInputError,
    InvalidTableError,
    LockAcquisitionError,
    TableNotFoundError,
    WriteConflictError,
)

__all__ = [
    "HudiOpsError",
    "InvalidInputError",
    "InvalidTableError",
    "LockAcquisitionError",
    "TableNotFoundError",
    "WriteConflictError",
]
