"""Hudi's error table for an ingest of messages (`hoodie.errortable.enable`): a message that cannot
become a row lands there with its place in the topic, its raw value and the reason, and the ingest goes
on; without it (the default) the first such message fails the run, nothing written and nothing skipped.

The error table is a Hudi table of its own (COPY_ON_WRITE, partitioned by topic), keyed by the message's
topic, partition and offset. As HoodieStreamer does, a batch's errors commit to it just before the
batch's own commit: an attempt that fails in between leaves errors of a batch the table has not taken,
and its retry, reading the same range, writes the same keys again: each message is there once.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from hudi_ops.errors import ConfigError
from hudi_ops.options.config_property import HoodieConfig
from hudi_ops.options.keys import ErrorTableConfig, FailedWritesConfig, HeartbeatConfig, LockConfig, WriteConfig

#: Hudi's names for why a record went to the error table (ErrorEvent.ErrorReason)
NOT_A_ROW = "JSON_ROW_DESERIALIZATION_FAILURE"
NOT_A_RECORD = "RECORD_CREATION"
NOT_AN_AVRO_RECORD = "AVRO_DESERIALIZATION_FAILURE"
#: the error table's columns, after Hudi's own
COLUMNS = ("topic", "partition", "offset", "kafka_timestamp", "value", "reason", "error", "target_table",
           "ingest_run")
RECORD_KEY = ("topic", "partition", "offset")
PARTITION_FIELD = "topic"
#: the table's options an error table's write shares: how writers take turns, not what the table is
_SHARED_PREFIXES = (LockConfig.PREFIX, WriteConfig.CONCURRENCY_PREFIX, FailedWritesConfig.POLICY.name,
                    HeartbeatConfig.PREFIX)
#: a commit's count of the messages of its batch that went to the error table
ERRORS_KEY = "_hudi_ops.errortable.records"


@dataclass(frozen=True)
class ErrorTable:
    base_path: str
    name: str

    def write_options(self, options: Mapping[str, str]) -> dict[str, str]:
        """The ingest's options an error table's write keeps: its lock and concurrency settings."""
        return {k: v for k, v in options.items() if k.startswith(_SHARED_PREFIXES)}


def error_table(options: Mapping[str, str], table_name: str) -> ErrorTable | None:
    """The error table the options turn on, if any."""
    config = HoodieConfig(options)
    if config.get(ErrorTableConfig.ENABLED) != "TRUE":
        return None
    base_path = config.get(ErrorTableConfig.BASE_PATH)
    if not base_path:
        raise ConfigError(f"{ErrorTableConfig.ENABLED.name}=true needs {ErrorTableConfig.BASE_PATH.name}: the path "
                          "of the Hudi table the messages that cannot be read go to")
    return ErrorTable(base_path.rstrip("/"), config.get(ErrorTableConfig.TARGET_TABLE) or f"{table_name}_errors")
