"""The writers' specs: `ingest` and `backfill`, with Hudi utilities' (HoodieStreamer's) flag names."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any, ClassVar

from hudi_ops.errors import InvalidInputError
from hudi_ops.job_specs.arguments import COUNT, SECONDS, JobSpec, argument
from hudi_ops.job_specs.results import JobResult

TABLE_TYPES = ("COPY_ON_WRITE", "MERGE_ON_READ")
#: what an ingest reads (hudi_ops.sources: one module per kind)
SOURCE_KINDS = ("files", "kafka", "debezium", "hudi")
#: the kinds read from a Kafka topic (`--kafka-topic`)
KAFKA_KINDS = ("kafka", "debezium")
#: how a Kafka ingest's values are written: JSON objects; Avro binary of one schema (as Spark's `to_avro`
#: and Avro's own encoders write it); or that in Confluent's schema-registry framing (a zero byte and a
#: 4-byte schema id first, as Confluent's KafkaAvroSerializer writes it)
VALUE_FORMATS = ("json", "avro", "confluent_avro")
#: the landing files' formats, and the names that make a file one of them
SOURCE_FORMATS = {"parquet": (".parquet",), "json": (".json", ".jsonl"), "csv": (".csv",)}
#: how long a second attempt of a batch waits for the first by default: a long batch's length
DEFAULT_BATCH_WAIT_S = 900.0
#: the write operations the jobs offer (`--op`), Hudi's names
OPERATIONS = ("UPSERT", "INSERT", "BULK_INSERT", "DELETE")
#: a backfill's also: each day's partition replaced by the day's source, or deleted
PARTITION_OPERATIONS = ("INSERT_OVERWRITE", "DELETE_PARTITION")
BACKFILL_OPERATIONS = (*OPERATIONS, *PARTITION_OPERATIONS)


@dataclass(frozen=True, kw_only=True)
class WriteSpec(JobSpec):
    """Base of the writers: source files written into the table through Hudi's datasource. The table's
    settings may be left out once it exists (its own are used); a first write creates it with them."""

    RESULT: ClassVar[type[JobResult]] = JobResult

    base_path: str = argument("--target-base-path", "the table's folder or URI")
    source_path: str | None = argument("--source-path", "the folder the job reads", default=None)
    source_format: str = argument("--source-format", "the source files' format", default="parquet",
                                  choices=tuple(SOURCE_FORMATS))
    table_name: str | None = argument("--target-table", "the table's name (default: the table's, or 'table')",
                                      default=None)
    table_type: str | None = argument("--table-type", "default: the table's type, COPY_ON_WRITE for a new table",
                                      default=None, choices=TABLE_TYPES, upper=True)
    record_key_field: str | None = argument("--record-key-field",
                                            "field, or comma-separated fields (default: the table's)", default=None)
    partition_path_field: str | None = argument(
        "--partition-path-field", "field(s) (default: the table's; none for a new table)", default=None)
    ordering_field: str | None = argument(
        "--source-ordering-field", "the field whose greatest value wins (default: the table's)", default=None)
    operation: str = argument("--op", "Hudi's write operation", default="UPSERT", choices=OPERATIONS, upper=True)
    run_id: str | None = argument("--run-id", "the run (Airflow's run_id), recorded with each commit: another attempt "
                                              "of the run finds what it committed", default=None)
    wait_seconds: float = argument("--wait-seconds", "how long to wait while another attempt writes the same batch",
                                   default=DEFAULT_BATCH_WAIT_S, kind=SECONDS)

    def table_settings(self) -> dict[str, Any]:
        """The table's settings as the flags give them (None: the table's own), for hudi_ops.spark's target."""
        return {"table_name": self.table_name, "table_type": self.table_type, "record_key": self.record_key_field,
                "partition_path": self.partition_path_field, "ordering_field": self.ordering_field}


@dataclass(frozen=True, kw_only=True)
class IngestSpec(WriteSpec):
    """`ingest`: the source files the table's ingest has not taken, whatever their modification times, in one
    commit (or in commits of at most `--source-limit` bytes and `--source-limit-files` files)."""

    JOB: ClassVar[str] = "ingest"

    source_limit: int = argument("--source-limit", "at most this many bytes of source files per commit (0: no "
                                 "limit; a larger file is a commit of its own)", default=0, kind=COUNT)
    source_limit_files: int = argument("--source-limit-files", "at most this many source files per commit (0: no "
                                       "limit)", default=0, kind=COUNT)
    source_kind: str = argument("--source-kind", "what the ingest reads: a landing folder's files "
                                "(--source-path), a Kafka topic's JSON or Avro values or a Debezium change log on a "
                                "topic (--kafka-topic), or an upstream Hudi table's changes (--source-path)",
                                default="files", choices=SOURCE_KINDS)
    kafka_topic: str | None = argument("--kafka-topic", "the topic a Kafka ingest reads; its client settings are "
                                       "the options kafka.* (kafka.bootstrap.servers, ...), best in --props",
                                       default=None)
    source_limit_events: int = argument("--source-limit-events", "at most this many Kafka messages per commit (0: "
                                        "no limit, or hoodie.streamer.kafka.source.maxEvents)", default=0, kind=COUNT)
    kafka_value_format: str = argument("--kafka-value-format", "how a Kafka ingest's values are written: JSON "
                                       "objects, Avro records (the option hoodie.streamer.schemaprovider.source."
                                       "schema.file names their schema) or Avro in Confluent's schema-registry "
                                       "framing", default="json", choices=VALUE_FORMATS)

    def validate(self) -> None:
        if self.source_kind == "files" and not self.source_path:
            raise InvalidInputError("ingest: --source-path is required: the landing folder the ingest reads "
                                    "(or --source-kind kafka with --kafka-topic)")
        if self.source_kind == "hudi" and not self.source_path:
            raise InvalidInputError("ingest: --source-kind hudi needs --source-path, the upstream Hudi table's base "
                                    "path")
        if self.source_kind in KAFKA_KINDS and not self.kafka_topic:
            raise InvalidInputError(f"ingest: --source-kind {self.source_kind} needs --kafka-topic, the topic the "
                                    "ingest reads")
        if self.source_kind in KAFKA_KINDS and self.source_path:
            raise InvalidInputError("ingest: --source-path names a landing folder, which a Kafka ingest does not "
                                    "read; give --source-kind files, or leave --source-path out")
        if self.source_kind == "kafka" and self.operation == "BULK_INSERT":
            raise InvalidInputError("ingest: a Kafka ingest cannot --op BULK_INSERT: Hudi's bulk insert by rows "
                                    "commits without HoodieStreamer's checkpoint; use INSERT or UPSERT")
        if self.kafka_value_format != "json" and self.source_kind != "kafka":
            raise InvalidInputError(f"ingest: --kafka-value-format {self.kafka_value_format} is for --source-kind "
                                    f"kafka (a Debezium change log is read as JSON); leave it out")
        if self.source_kind in ("debezium", "hudi") and self.operation != "UPSERT":
            raise InvalidInputError(f"ingest: a change log's changes say themselves what they do (--op "
                                    f"{self.operation} cannot apply); leave --op out")


@dataclass(frozen=True, kw_only=True)
class BackfillSpec(WriteSpec):
    """`backfill`: the source's dt=YYYY-MM-DD folders from --start to --end, one commit a day. An attempt of
    a run skips the days the run committed; another run of the window writes it again."""

    JOB: ClassVar[str] = "backfill"

    start: str = argument("--start", "the first dt=YYYY-MM-DD source folder")
    end: str = argument("--end", "the last dt=YYYY-MM-DD source folder")
    operation: str = argument("--op", "Hudi's write operation; INSERT_OVERWRITE replaces each day's partition by "
                                      "the day's source, DELETE_PARTITION deletes the window's partitions",
                              default="UPSERT", choices=BACKFILL_OPERATIONS, upper=True)

    def validate(self) -> None:
        if not self.source_path and self.operation != "DELETE_PARTITION":
            raise InvalidInputError("backfill: --source-path is required: the folder of dt=YYYY-MM-DD folders")
        self.window()

    def window(self) -> tuple[dt.date, dt.date]:
        """The first and last day."""
        first, last = _day(self.start, "--start"), _day(self.end, "--end")
        if first > last:
            raise InvalidInputError(f"the backfill window ends ({last}) before it starts ({first}); "
                                    "swap the start and the end")
        return first, last


def _day(text: str, flag: str) -> dt.date:
    try:
        return dt.date.fromisoformat(text)
    except ValueError:
        raise InvalidInputError(f"{flag} {text!r} is not a date; write YYYY-MM-DD") from None
