"""`ingest --source-kind kafka` (or `debezium`): the messages of a Kafka topic the table's ingest has not
taken, up to the topic's end offsets when the run starts, in one commit (or commits of at most
`--source-limit-events`): JSON objects or Avro records (hudi_ops.spark.sources.kafka_avro) as rows, or a
Debezium change log's changes (hudi_ops.spark.sources.debezium), ordered by their place in the database's
log. With Hudi's error table on, the messages that cannot be read go there, each batch's just before its
commit (hudi_ops.sources.error_table); without it the first fails the run.

Each commit carries the offsets it read up to in HoodieStreamer's checkpoint key, written with the data
(hudi_ops.sources.kafka), and the run in hudi-ops' own: a retry of a run that committed finds it, and
one killed before its commit reads the same range again. The whole job holds the topic's batch fence,
as a files ingest holds its folder's (hudi_ops.spark.jobs.batch_fence). The Kafka client's settings
(`kafka.*` options) go to Spark's reader and never to Hudi's writer, so no secret reaches the commit.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from typing import Any

from hudi_ops.errors import InvalidInputError
from hudi_ops.job_specs import IngestSpec
from hudi_ops.job_specs.results import JobResult, nothing_to_ingest, since
from hudi_ops.read.pipeline_metadata import INGEST_CHECKPOINT_KEY
from hudi_ops.sources.error_table import ERRORS_KEY, ErrorTable, error_table
from hudi_ops.sources.kafka import (
    CLIENT_PREFIX,
    KafkaBatch,
    KafkaWork,
    client_settings,
    fails_on_data_loss,
    kafka_work,
    max_events,
    read_value_schema,
    source_id,
    value_schema_file,
)
from hudi_ops.spark.jobs import hudi_write
from hudi_ops.spark.jobs.batch_fence import BatchFence, ingest_batch
from hudi_ops.spark.jobs.error_table import write_errors
from hudi_ops.spark.jobs.input_schema import check_input_schema
from hudi_ops.spark.jobs.table_creation import TableCreation
from hudi_ops.spark.jobs.target import TargetTable, resolve_target
from hudi_ops.spark.sources import arrow_schema
from hudi_ops.spark.sources.debezium import read_changes
from hudi_ops.spark.sources.kafka import BadMessages, read_batch, table_columns
from hudi_ops.spark.sources.kafka_avro import read_avro_batch


def run(spec: IngestSpec, options: dict[str, str], spark: Callable[[], Any]) -> JobResult:
    """`spark` starts the session, called only when there is work."""
    topic = str(spec.kafka_topic)
    client = client_settings(options)
    hudi_options = {k: v for k, v in options.items() if not k.startswith(CLIENT_PREFIX)}
    name = spec.table_name or "table"
    errors = error_table(options, name)  # a setting at fault fails before anything is read
    schema_file = value_schema_file(options, spec.kafka_value_format)
    schema = read_value_schema(schema_file) if schema_file else None  # once, before Spark starts
    with BatchFence(spec.base_path, hudi_options, name, ingest_batch(source_id(topic)), spec.wait_seconds) as fence, \
            TableCreation(spec.base_path, hudi_options, name):
        started = time.perf_counter()
        target = resolve_target(spec.base_path, hudi_options, **spec.table_settings())
        work = kafka_work(spec.base_path, topic, client, fail_on_data_loss=fails_on_data_loss(options))
        batches = work.batches(spec.source_limit_events or max_events(options))
        if not batches:
            return _nothing_to_do(spec, work, started)
        result = JobResult("ingest")
        batch_ingest = _BatchIngest(spec, topic, client, hudi_options, name, errors, fence, schema)
        for batch in batches:
            result, target = batch_ingest.run(spark(), batch, target, result)
        if not result.commits:
            return _nothing_to_do(spec, work, started, error_table_records=result.error_table_records, idle=(
                f"the {work.events} new message(s) in topic {topic} are tombstones (null values), which carry no "
                "row, or went to the error table; the next commit records the offsets past them"))
        return dataclasses.replace(result, durations_ms=since(started))


@dataclasses.dataclass(frozen=True)
class _BatchIngest:
    """What each batch's ingest shares: the run's settings, its error table and the topic's fence."""

    spec: IngestSpec
    topic: str
    client: dict[str, str]
    options: dict[str, str]  # Hudi's, without the Kafka client's
    name: str
    errors: ErrorTable | None
    fence: BatchFence
    value_schema: str | None  # Avro values' schema; None: JSON values

    def run(self, spark: Any, batch: KafkaBatch, target: TargetTable,
            result: JobResult) -> tuple[JobResult, TargetTable]:
        """`batch` read and committed, its errors first; `result` with its commit, and the table after it."""
        spec, topic, options = self.spec, self.topic, self.options
        bad = BadMessages(topic, keep=self.errors is not None, binary=self.value_schema is not None)
        try:  # the frames the batch holds go once it is written (or fails)
            read = _read(spark, spec, batch, self.client, target, options, bad, self.value_schema)
            set_aside = _write_errors(spark, bad, self.errors, options, topic, self.name, spec.run_id)
            result = dataclasses.replace(result, error_table_records=result.error_table_records + set_aside)
            if read is None and set_aside and target.exists:  # errors only: a commit of no row keeps the offsets
                read = spark.createDataFrame([], table_columns(target)), target
            if read is None:  # tombstones only: the next batch's commit records the offsets past them
                return result, target
            frame, target = read
            check_input_schema(arrow_schema(frame), target, options, f"topic {topic} from {batch.start} to {batch.end}",
                               keys_only=spec.operation == "DELETE")
            run_id, write_options = hudi_write.write_options(
                target, spec.operation, self.fence.write_options(options), job="ingest",
                extra_metadata={INGEST_CHECKPOINT_KEY: batch.ingest_checkpoint(spec.run_id or "").to_json(),
                                **batch.skipped_record(), **({ERRORS_KEY: str(set_aside)} if set_aside else {})})
            written = hudi_write.write(spark, frame, target, write_options, run_id, f"Kafka topic {topic}",
                                       commit_metadata=batch.commit_metadata())
            result = result.plus(written.commit, checkpoint=str(batch.end), after_commit=written.after_commit)
            if not target.exists:  # the next batch writes to the table this one made
                target = resolve_target(spec.base_path, options, **spec.table_settings())
            return result, target
        finally:
            bad.release()  # never in the way of the batch's own error


def _read(spark: Any, spec: IngestSpec, batch: KafkaBatch, client: dict[str, str], target: TargetTable,
          options: dict[str, str], bad: BadMessages, value_schema: str | None) -> tuple[Any, TargetTable] | None:
    """The batch's rows, and the table they go to (a change log's is ordered by its ordering column);
    None when the batch holds tombstones only, or messages that go to `bad`."""
    known = table_columns(target)
    if spec.source_kind != "debezium":
        if value_schema is None:
            frame = read_batch(spark, batch, client, known, bad)
        else:
            frame = read_avro_batch(spark, batch, client, value_schema, bad=bad,
                                    confluent=spec.kafka_value_format == "confluent_avro")
        return None if frame is None else (frame, target)
    changes = read_changes(spark, batch, client, known, target.partition_fields, bad)
    if changes is None:
        return None
    frame, column = changes
    if target.ordering_field == column:
        return frame, target
    if spec.ordering_field not in (None, column):
        raise InvalidInputError(f"a change log is ordered by its place in the database's log ({column}), not by "
                                f"--source-ordering-field {spec.ordering_field}; leave it out")
    settings = {**spec.table_settings(), "ordering_field": column}
    return frame, resolve_target(spec.base_path, options, **settings)  # a table of another order: refused


def _write_errors(spark: Any, bad: BadMessages, table: ErrorTable | None, options: dict[str, str], topic: str,
                  target_table: str, run: str | None) -> int:
    """How many of the batch's messages went to the error table (written there now)."""
    kept = bad.kept()
    if table is None or kept is None:
        return 0
    count = kept.count()  # of frames the batch holds: the topic is not read again for the count or the write
    if count:
        write_errors(spark, kept, table, options, topic=topic, target_table=target_table, ingest_run=run or "")
    return count


def _nothing_to_do(spec: IngestSpec, work: KafkaWork, started: float, *, idle: str | None = None,
                   error_table_records: int = 0) -> JobResult:
    """No message left: this run's own earlier attempt may have taken them (the fence made us wait for it)."""
    last = (work.checkpoint.instant, work.checkpoint.run) if work.checkpoint else None
    done = nothing_to_ingest(spec.run_id, last, work.position, started=started, idle=idle or work.describe(),
                             committed=f"topic {work.topic} up to {work.position}")
    return dataclasses.replace(done, error_table_records=error_table_records)
